// The entry point of a request worker thread (started by request-workers.ts).

import { parentPort, workerData } from 'node:worker_threads';
import type { WorkerInit } from './protocol.ts';
import { runRequestWorker } from './request-worker.ts';

if (parentPort === null) throw new Error('src/workers/worker-main.ts runs only as a worker thread');
await runRequestWorker(workerData as WorkerInit, parentPort);

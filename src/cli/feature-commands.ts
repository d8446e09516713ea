// The CLI's feature list: the one file of cli/ that names a feature (docs/design.md, "Features plug
// in"). A command whose work is a feature's own gets that work from the feature's folder here;
// main.ts loads this file only when such a command runs, so no other command loads a feature.

import { generateSiteKeyFile } from '#src/mesh/site-key-file.ts';
import type { Command } from './io.ts';
import { keygenCommand } from './keygen.ts';

/** `switchyard keygen`: the mesh's site key file (written by the mesh, which owns its format and peer id). */
export const runKeygen: Command = keygenCommand(generateSiteKeyFile);

// What each command prints for --help or a usage error, apart from the command itself: `--help`
// reads these without loading the command (src/cli/main.ts imports a command only to run it).

import { DEFAULT_CONFIG_PATHS } from './config-lookup.ts';

export const INIT_USAGE = `usage: switchyard init URL [URL...] [--out FILE|- [--force]] [--listen HOST:PORT] [--timeout DURATION] [--resolver IP:PORT]

Probes each inference server (nothing is loaded), detects its kind and writes a commented config.
  URL                 a server's base URL, e.g. http://gpu-box:8000 ("http://" may be left out); a
                      name that resolves to several addresses becomes a DNS node source (each
                      address probed), so servers the name gains or loses later are followed
  --resolver IP:PORT  the DNS server asked for such names (default: the system's), written into it too
  --out FILE          where the config goes (default ./switchyard.toml, which serve runs without
                      --config; "-" = stdout); an existing FILE is kept unless --force
  --listen HOST:PORT  where the written config has the gateway listen (default 127.0.0.1:8080)
  --timeout DURATION  bound on each request to a server (default 3s)
`;

export const SERVE_USAGE = `usage: switchyard serve [--config FILE] [--log-format json|pretty]

Runs the gateway until SIGINT/SIGTERM; SIGHUP (or POST /admin/reload) re-reads the config,
and SIGHUP reopens the request log ([log] requests).
Without --config: ${DEFAULT_CONFIG_PATHS.join(', then ')}.
`;

export const CHECK_CONFIG_USAGE = `usage: switchyard check-config FILE   (or --config FILE)

Loads FILE exactly as serve would and prints every problem (exit 1), or a summary (exit 0).
`;

export const KEYGEN_USAGE = `usage: switchyard keygen --out FILE

Writes a new Ed25519 site key to FILE (PKCS#8 PEM, mode 0600; an existing FILE is never
overwritten) for [mesh] key_file, and prints one JSON line:
  {"public_key": "<base64url raw 32 bytes>", "peer_id": "<libp2p peer id>"}
Other sites pin public_key in [[mesh.sites]] and dial /.../p2p/<peer_id> in [mesh] peers.
`;

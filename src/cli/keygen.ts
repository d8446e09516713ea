// `switchyard keygen --out FILE`: writes a new site key (Ed25519, PKCS#8 PEM, mode 0600) and prints
// one JSON line with what other sites pin (`public_key`) and dial (`peer_id`). It never overwrites
// a file: replacing a site's key means re-pinning it at every other site, so it must be deliberate.
// The key file itself is the mesh's (mesh/site-key-file.ts): the CLI's feature list
// (feature-commands.ts) gives this command its writer.
import { flagValue, type Command } from './io.ts';
import { KEYGEN_USAGE } from './command-usage.ts';

/** Writes a new site key to a path that must not exist yet: what other sites pin and dial. */
export type SiteKeyWriter = (path: string) => Promise<{ readonly publicKey: string; readonly peerId: string }>;

export function keygenCommand(writeKeyFile: SiteKeyWriter): Command {
  return async (argv, io) => {
    // Exactly `--out FILE` or `--out=FILE`: a stray argument may be a mistyped flag meant to change where the key goes.
    const out =
      argv.length === 2 || (argv.length === 1 && argv[0]?.startsWith('--out=') === true) ? flagValue(argv, 'out') : undefined;
    if (out === undefined || out === '' || out.startsWith('-')) {
      io.stderr.write(KEYGEN_USAGE);
      return 2;
    }
    try {
      const key = await writeKeyFile(out);
      io.stdout.write(`${JSON.stringify({ public_key: key.publicKey, peer_id: key.peerId })}\n`);
      return 0;
    } catch (error) {
      io.stderr.write(`switchyard keygen: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
  };
}

// optionsProblem: a command's arguments against what it takes (src/cli/options.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { optionsProblem, type AcceptedOptions } from '#src/cli/options.ts';

const SERVE: AcceptedOptions = { valued: ['config', 'log-format'] };
const INIT: AcceptedOptions = { valued: ['out', 'listen', 'timeout'], flags: ['force'], positionals: 'any' };
const STATUS: AcceptedOptions = { valued: ['url', 'config', 'token'], flags: ['watch'] };

const CASES: readonly [string, AcceptedOptions, readonly string[], string | undefined][] = [
  ['nothing', SERVE, [], undefined],
  ['a valued option, spaced', SERVE, ['--config', 'a.toml'], undefined],
  ['a valued option, with =', SERVE, ['--config=a.toml', '--log-format=json'], undefined],
  ['a value that looks like an option is a value', INIT, ['http://x', '--out', '-'], undefined],
  ['help is always taken', SERVE, ['--help'], undefined],
  ['-h too', STATUS, ['-h'], undefined],
  ['an unknown option', SERVE, ['--bogus'], "unknown option '--bogus'"],
  ['an unknown option with a value', SERVE, ['--bogus=1'], "unknown option '--bogus'"],
  ['a short unknown option', SERVE, ['-x'], "unknown option '-x'"],
  ['a misspelt option after good ones', STATUS, ['--url', 'http://x', '--wacth'], "unknown option '--wacth'"],
  ['a valued option without its value', SERVE, ['--config'], '--config needs a value'],
  ['a flag given a value', STATUS, ['--watch=yes'], '--watch takes no value'],
  ['a positional where none is taken', SERVE, ['a.toml'], "unexpected argument 'a.toml'"],
  ['a lone - where none is taken', SERVE, ['-'], "unexpected argument '-'"],
  ['positionals where taken', INIT, ['http://a', 'http://b', '--force'], undefined],
  ['the value of an option is not checked as an option', STATUS, ['--token', '--watch'], undefined],
];

for (const [name, accepted, argv, expected] of CASES) {
  test(`optionsProblem: ${name}`, () => {
    assert.equal(optionsProblem(argv, accepted), expected);
  });
}

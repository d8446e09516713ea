// Pure: which config `serve` runs when none is named: the working directory's, then the system's.

export const DEFAULT_CONFIG_PATHS: readonly string[] = ['./switchyard.toml', '/etc/switchyard/switchyard.toml'];

export function defaultConfigPath(exists: (path: string) => boolean): string | undefined {
  return DEFAULT_CONFIG_PATHS.find((path) => exists(path));
}

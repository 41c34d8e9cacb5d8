/**
 * The plugin's environment: only the variables its manifest names, with their values from the
 * host's environment. Everything else, PATH included, is cleared.
 */
export function pluginEnvironment(declared: readonly string[] | undefined, hostEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of declared ?? []) {
    const value = hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

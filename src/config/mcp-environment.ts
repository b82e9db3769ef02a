/**
 * The environment of a stdio MCP server: `PATH`, `HOME` and the variables its
 * config lists, never pincer's own. Variables that make a program load code it
 * was not asked to run (preloaded libraries, interpreter start-up files, extra
 * module paths, tool options) are refused whatever their case: a config entry
 * must not turn "run this server" into "run this server and this other code".
 */

/** Loader variables refused by exact name (compared in upper case). */
const REFUSED_NAMES: ReadonlySet<string> = new Set([
  // Node.js: options such as --require / --import, extra module folders, the REPL's module.
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'ELECTRON_RUN_AS_NODE',
  // Python: module paths, start-up files, the interpreter's home, interactive mode after the
  // script (it would read commands from the server's stdin), and hooks that import a module.
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PYTHONINSPECT',
  'PYTHONUSERBASE',
  'PYTHONEXECUTABLE',
  'PYTHONPLATLIBDIR',
  'PYTHONPYCACHEPREFIX',
  'PYTHONBREAKPOINT',
  'PYTHONWARNINGS',
  // Java: options read by every JVM (-javaagent), the class path, and the launch scripts' options.
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'JAVA_OPTS',
  'CLASSPATH',
  // glibc's converters and getconf helpers (shared objects it loads).
  'GCONV_PATH',
  'GETCONF_DIR',
  // OpenSSL configuration can load engines and providers.
  'OPENSSL_CONF',
  'OPENSSL_ENGINES',
  'OPENSSL_MODULES',
  // Perl and Ruby options and library paths.
  'PERL5OPT',
  'PERL5LIB',
  'PERLLIB',
  'PERL5DB',
  'RUBYOPT',
  'RUBYLIB',
  // Shells: start-up files and options read by non-interactive shells, the trace prompt.
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'ZDOTDIR',
]);

/**
 * Loader variables refused by beginning (in upper case): the dynamic linkers
 * (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT`...; macOS `DYLD_INSERT_LIBRARIES`...),
 * npm's settings (`npm_config_node_options`, `npm_config_script_shell`...), and
 * bash's exported functions, which replace commands in any bash script.
 */
const REFUSED_PREFIXES: readonly string[] = ['LD_', 'DYLD_', 'NPM_CONFIG_', 'BASH_FUNC_'];

/** Variables a server inherits from pincer; its config may set them, which is logged. */
export const INHERITED_VARIABLES = ['PATH', 'HOME'] as const;

/** Whether `name` is a loader variable a server may not be given, in any case (`Node_Options`, `ld_preload`). */
export function isRefusedVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return REFUSED_NAMES.has(upper) || REFUSED_PREFIXES.some((prefix) => upper.startsWith(prefix));
}

/** The names in a server's `env` that set `PATH` or `HOME` themselves (in any case). */
export function inheritedOverrides(env: Record<string, string>): string[] {
  return Object.keys(env).filter((name) => (INHERITED_VARIABLES as readonly string[]).includes(name.toUpperCase()));
}

/**
 * A stdio server's whole environment: `PATH` and `HOME` from pincer's, then
 * what its config lists (which may replace them). A loader variable never
 * passes, even when the config was not checked.
 */
export function serverEnvironment(env: Record<string, string>, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const base: Record<string, string> = {};
  const overridden = new Set(inheritedOverrides(env).map((name) => name.toUpperCase()));
  for (const name of INHERITED_VARIABLES) if (parent[name] && !overridden.has(name)) base[name] = parent[name]!;
  const listed = Object.entries(env).filter(([name]) => !isRefusedVariable(name));
  return { ...base, ...Object.fromEntries(listed) };
}

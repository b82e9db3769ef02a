/**
 * `pincer doctor`: checks the setup and prints a checklist.
 */

/** Options of {@link runDoctor}. */
export interface DoctorOptions {
  /** Whether calls to the model that may cost money are made. */
  modelCalls: boolean;
}

/** Runs the checks; resolves to the exit code (non-zero when anything failed). */
export async function runDoctor(_options: DoctorOptions): Promise<number> {
  process.stderr.write('pincer doctor: not built yet\n');
  return 2;
}

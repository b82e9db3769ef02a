/**
 * The files a job is told of: those the conversation it came from received
 * most recently (a photo, a PDF sent with "summarise this in the background"),
 * newest last. They are in the workspace the job shares with that
 * conversation, so `files_read` opens them by the paths given here. A routine
 * keeps the files of its conversation when it is scheduled, and each job it
 * starts is told of them.
 */
import { z } from 'zod';
import type { ThreadRecord } from '../engine/thread-record.js';
import { sizeText } from '../engine/attachments/received.js';

/** How many of the latest files a job is told of. */
export const JOB_FILES_KEPT = 10;

/** A file as a job is told of it. */
export const JobFileSchema = z.object({
  /** Relative to the workspace: `attachments/report.pdf`. */
  path: z.string(),
  kind: z.enum(['image', 'audio', 'document', 'video', 'other']),
  mimeType: z.string(),
  sizeBytes: z.number(),
  /** Where its text was saved (a PDF's text layer), when it was. */
  textPath: z.string().optional(),
});
export type JobFile = z.infer<typeof JobFileSchema>;

/** The latest files the conversation of `record` received, newest last. */
export function recentFiles(record: Pick<ThreadRecord, 'attachments'>): JobFile[] {
  return (record.attachments ?? []).slice(-JOB_FILES_KEPT).map((saved) => ({
    path: saved.path,
    kind: saved.kind,
    mimeType: saved.mimeType,
    sizeBytes: saved.sizeBytes,
    ...(saved.textPath ? { textPath: saved.textPath } : {}),
  }));
}

/** The lines that tell the job's model of its files; empty without files. */
export function filesText(files: readonly JobFile[] | undefined): string {
  if (!files?.length) return '';
  const lines = files.map((file) => {
    const text = file.textPath ? `; its text is in ${file.textPath}` : '';
    return `- ${file.path} (${file.kind}, ${file.mimeType}, ${sizeText(file.sizeBytes)}${text})`;
  });
  return `\nFiles the conversation received lately (newest last), in your workspace: open them with files_read if the goal needs them.\n${lines.join('\n')}`;
}

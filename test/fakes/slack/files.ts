/**
 * Files shared in the fake Slack, served as Slack serves them: `url_private`
 * (`/files-pri/<team>-<id>/<name>`) answers the bytes to a request bearing the
 * bot token, from an app with `files:read`; to any other, Slack's sign-in page
 * (HTML, status 200). A file may be moved behind a redirect to another host
 * (`redirectElsewhere`), which serves it to anyone, as a CDN's signed URL does;
 * every download records the Authorization header it came with.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A file a user shares. */
export interface SharedFileInput {
  name: string;
  mimetype?: string;
  bytes: Buffer;
}

/** One request for a file's bytes. */
export interface FileDownload {
  /** Which server answered: Slack's own, or the other host a redirect leads to. */
  host: 'slack' | 'elsewhere';
  path: string;
  authorization?: string;
}

interface StoredFile {
  id: string;
  path: string;
  bytes: Buffer;
  redirect: boolean;
}

/** The sign-in page Slack answers to a request without a usable token. */
const SIGN_IN_PAGE = '<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to continue</body></html>';

/** The files of the fake workspace, and the other host. */
export class SharedFiles {
  readonly downloads: FileDownload[] = [];
  private readonly files = new Map<string, StoredFile>();
  private readonly elsewhere: Server = createServer((req, res) => this.serveElsewhere(req, res));
  private elsewherePort = 0;

  constructor(
    private readonly teamId: string,
    private readonly botToken: string,
    private readonly canRead: () => boolean,
  ) {}

  /** Starts the other host. */
  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.elsewhere.listen(0, '127.0.0.1', resolve));
    this.elsewherePort = (this.elsewhere.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.elsewhere.closeAllConnections();
    await new Promise<void>((resolve) => this.elsewhere.close(() => resolve()));
  }

  /** Keeps a shared file; the `files` entry of its message event, its `url_private` on `baseUrl`. */
  add(file: SharedFileInput, baseUrl: string): Record<string, unknown> {
    const id = `F0${randomBytes(5).toString('hex').toUpperCase()}`;
    const path = `/files-pri/${this.teamId}-${id}/${encodeURIComponent(file.name)}`;
    this.files.set(path, { id, path, bytes: file.bytes, redirect: false });
    return {
      id,
      name: file.name,
      title: file.name,
      mimetype: file.mimetype ?? 'application/octet-stream',
      size: file.bytes.length,
      url_private: `${baseUrl}${path}`,
      url_private_download: `${baseUrl}${path}?download=1`,
    };
  }

  /** From now on, the file `id` is a redirect to the other host. */
  redirectElsewhere(id: string): void {
    for (const file of this.files.values()) if (file.id === id) file.redirect = true;
  }

  /** Whether `path` is a file's; answers it. */
  serve(path: string, req: IncomingMessage, res: ServerResponse): boolean {
    const file = this.files.get(path);
    if (!file) return false;
    const authorization = req.headers.authorization;
    this.downloads.push({ host: 'slack', path, ...(authorization ? { authorization } : {}) });
    if (authorization !== `Bearer ${this.botToken}` || !this.canRead()) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(SIGN_IN_PAGE);
    } else if (file.redirect) {
      res.writeHead(302, { location: `http://127.0.0.1:${this.elsewherePort}${path}?sig=${file.id}` }).end();
    } else {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(file.bytes.length) }).end(file.bytes);
    }
    return true;
  }

  private serveElsewhere(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://elsewhere');
    const file = this.files.get(url.pathname);
    const authorization = req.headers.authorization;
    this.downloads.push({ host: 'elsewhere', path: url.pathname, ...(authorization ? { authorization } : {}) });
    if (!file) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(file.bytes.length) }).end(file.bytes);
  }
}

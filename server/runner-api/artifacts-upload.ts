// Reading an artifacts upload: the request's 'data' events feed our form parser (http/form-parser.ts)
// and the file part's bytes go straight to the upload sink's writes; the request is paused while the
// sink holds its high-water mark and resumed on its drain, as the bare node:http reference does.
// No stream between the socket and the writes (why: http/form-parser.ts). The checks keep their
// order: a token field is checked before the parser reads on, and auth, the running check and a
// declared size over the limit are decided before the file's first byte is written.
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { ApiError, forbidden, tooLarge } from '../http/errors.ts';
import { FormParser, formBoundary } from '../http/form-parser.ts';
import { malformed } from '../http/form-part-head.ts';
import { FORM_PART_LIMITS } from '../http/multipart.ts';
import { str, type Params } from '../http/params.ts';
import type { ArtifactUpload, StagedUpload } from '../store/ports/artifact.ts';
import type { Build } from '../store/ports/build.ts';
import { isPromise } from '../domain/maybe-promise.ts';
import { buildTokenValid } from './auth.ts';

export interface ReceivedUpload {
  authed: boolean;
  staged?: StagedUpload;
  /** The client's file name, as sent (cleaned by the route). */
  filename?: string;
  fields: Params;
}

/**
 * Reads the multipart body of `request` for `build`; `authed` says whether a header or query token
 * already passed. Rejects with an ApiError (or a storage error) and leaves no staged file then.
 */
export function receiveArtifacts(ctx: AppContext, request: FastifyRequest, build: Build, authed: boolean): Promise<ReceivedUpload> {
  const builds = ctx.domain.builds;
  const raw = request.raw;
  const boundary = formBoundary(request.headers['content-type']);
  if (boundary === undefined) return Promise.reject(malformed('the Content-Type names no boundary (multipart/form-data; boundary=…)'));
  const declared = Number(request.headers['content-length']);
  const fields: Params = Object.create(null) as Params;
  // Fields (token, expire_in) may come before the file and so before the token is known: all of
  // them together are held to the small-body limit, not multipart's 50 × 1 MiB.
  const fieldBudget = ctx.config.maxRunnerBodyKib * 1024;
  let fieldBytes = 0;
  let upload: ArtifactUpload | undefined;
  let filename: string | undefined;
  /** The current file part is not the archive (another name, or a second file): its bytes are dropped. */
  let skipping = false;
  let sawData = false;
  let ended = false;
  /** Why the request is paused: the sink is full, a token field is being checked. */
  const pausedFor = new Set<'sink' | 'token'>();

  return new Promise<ReceivedUpload>((resolve, reject) => {
    let settled = false;
    const detach = () => {
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onClose);
      raw.off('error', fail);
    };
    function fail(err: unknown): void {
      if (settled) return;
      settled = true;
      // The error handler drains or closes what is left of the body (http/errors.ts), paused or not.
      detach();
      if (upload) void upload.abort().then(() => reject(err));
      else reject(err);
    }
    const pause = (why: 'sink' | 'token') => {
      if (pausedFor.size === 0) raw.pause();
      pausedFor.add(why);
    };
    const unpause = (why: 'sink' | 'token') => {
      pausedFor.delete(why);
      if (pausedFor.size === 0 && !settled) raw.resume();
    };

    const parser = new FormParser(
      boundary,
      { ...FORM_PART_LIMITS, fileSize: builds.maxArtifactBytes, fieldSize: fieldBudget },
      {
        field(name, value) {
          refusePrototypeName(name);
          fieldBytes += Buffer.byteLength(name) + Buffer.byteLength(value);
          if (fieldBytes > fieldBudget) throw tooLarge();
          fields[name] = value;
          if (name !== 'token' || authed) return;
          const valid = buildTokenValid(ctx, build, str(value));
          if (!isPromise(valid)) {
            if (!valid) throw forbidden();
            authed = true;
            return;
          }
          // Parse no further (no file byte written) until the token is known.
          parser.pause();
          pause('token');
          valid.then((ok) => {
            if (settled) return;
            if (!ok) return fail(forbidden());
            authed = true;
            try {
              parser.resume();
            } catch (err) {
              return fail(err);
            }
            unpause('token');
            if (ended) finish();
          }, fail);
        },
        file(head) {
          refusePrototypeName(head.name);
          skipping = head.name !== 'file' || upload !== undefined;
          if (skipping) return;
          if (!authed) throw forbidden();
          if (build.status !== 'running') throw forbidden('Build is not running!');
          if (Number.isFinite(declared) && declared > builds.maxArtifactBytes + 64 * 1024) throw tooLarge();
          filename = head.filename;
          // The HTTP parser copies every piece of a body into an ArrayBuffer of its own, and the
          // parser hands on those chunks or views of them: nothing else reads them once written.
          upload = builds.artifactUploads.begin({ drain: () => unpause('sink'), error: fail }, true);
        },
        fileData(buf) {
          if (!skipping && !upload!.write(buf)) pause('sink');
        },
        fileEnd() {
          skipping = false;
        },
      },
    );

    const finish = () => {
      if (settled || pausedFor.has('token')) return;
      try {
        // An empty body is an empty form (as @fastify/multipart had it): the route answers what is missing.
        if (sawData) parser.end();
      } catch (err) {
        return fail(err);
      }
      settled = true;
      detach();
      if (!upload) return resolve({ authed, fields, filename });
      upload.finish().then((staged) => resolve({ authed, fields, filename, staged }), reject);
    };
    function onData(chunk: Buffer): void {
      sawData = true;
      try {
        parser.write(chunk);
      } catch (err) {
        fail(err);
      }
    }
    function onEnd(): void {
      ended = true;
      finish();
    }
    function onClose(): void {
      if (!raw.complete) fail(malformed('the request was closed before the body was in'));
    }
    raw.on('data', onData);
    raw.on('end', onEnd);
    raw.on('close', onClose);
    raw.on('error', fail);
  });
}

/** @fastify/multipart refused a part named after an Object.prototype property, with this answer; so does this route. */
function refusePrototypeName(name: string): void {
  if (name in Object.prototype) throw new ApiError(400, '400 prototype property is not allowed as field name');
}

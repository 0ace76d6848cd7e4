// Body parsing for every API. JSON with an empty body counts as no params (Grape did the same);
// prototype-poisoned JSON is refused with a 400; any other content type is read as raw bytes so
// no client can provoke a 415/500 by sending an odd header. The trace route replaces these with
// its own raw parser (see runner-api/trace.ts).
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { badRequest } from './errors.ts';
import { MAX_JSON_DEPTH, jsonNestedDeeperThan } from '../util/json-depth.ts';

export function installBodyParsers(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, {});
    json(request, body as string, (err, parsed) => {
      if (err) return done(err);
      // Refused here, for every route: deeper JSON overflows the stack when it is stored or answered.
      if (jsonNestedDeeperThan(body as string, parsed, MAX_JSON_DEPTH)) return done(badRequest(`the JSON body is nested more than ${MAX_JSON_DEPTH} levels deep`));
      done(null, parsed);
    });
  });
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
}

const { FST_ERR_CTP_BODY_TOO_LARGE, FST_ERR_CTP_INVALID_CONTENT_LENGTH } = errorCodes;
type ParserDone = (err: Error | null, body?: unknown) => void;

/**
 * A raw-bytes body parser for one hot route (the trace PATCH): what fastify's `parseAs: 'buffer'`
 * does, with the same limit, the same errors (413, 400 for a length that differs from
 * Content-Length or a stream that failed) and so the same JSON answers, but a body that arrived as
 * one chunk owning its own memory is handed on as it is. Fastify copies every body into a new buffer
 * (Buffer.concat, even of one chunk) in case a chunk is a view of a shared read buffer; node's HTTP
 * parser copies each body chunk out of the socket's buffer already, so for a runner's 4 KiB part that
 * copy was a second allocation and memcpy per request. A chunk that is a view of a larger buffer is
 * still copied.
 */
export function rawBytesParser(limit: number) {
  return (request: FastifyRequest, payload: NodeJS.ReadableStream & { receivedEncodedLength?: number }, done: ParserDone): void => {
    const declared = Number(request.headers['content-length']);
    if (declared > limit) return done(new FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    let received = 0;
    const stop = () => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onEnd);
    };
    function onData(chunk: Buffer | string): void {
      // A preParsing stream may emit strings.
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += bytes.length;
      // The encoded length too (a decoding preParsing stream): what came over the wire is bounded as well.
      if (received > limit || (payload.receivedEncodedLength ?? 0) > limit) {
        stop();
        return done(new FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
      }
      if (first === undefined) first = bytes;
      else (more ??= [first]).push(bytes);
    }
    function onEnd(err?: Error & { statusCode?: number }): void {
      stop();
      if (err != null) {
        if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
        return done(err, undefined);
      }
      if (!Number.isNaN(declared) && (payload.receivedEncodedLength || received) !== declared) return done(new FST_ERR_CTP_INVALID_CONTENT_LENGTH(), undefined);
      done(null, more !== undefined ? Buffer.concat(more, received) : first === undefined ? Buffer.alloc(0) : ownBytes(first));
    }
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onEnd);
    payload.resume();
  };
}

/** The chunk itself when it is the whole of its own memory; a copy when it is a view into a larger buffer. */
function ownBytes(chunk: Buffer): Buffer {
  return chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength ? chunk : Buffer.from(chunk);
}

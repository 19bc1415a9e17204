/**
 * @module request-span
 * One span per HTTP request handled by the library (the token endpoint, and `requireBearer()` when the
 * host opts in): ended when the response closes, with its status code, or earlier by its owner.
 */
import { SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import type { ServerResponse } from 'node:http';

/** A span tied to one response; see the module description. */
export class RequestSpan {
  #ended = false;

  private constructor(
    readonly span: Span,
    res: ServerResponse,
  ) {
    res.once('close', () => this.end(res.statusCode));
  }

  /**
   * Starts `name` for the request answered by `res`, or returns `undefined` when the span would record
   * nothing (no OpenTelemetry SDK installed, or not sampled): then the caller skips its bookkeeping.
   */
  static start(tracer: Tracer, name: string, res: ServerResponse): RequestSpan | undefined {
    const span = tracer.startSpan(name);
    return span.isRecording() ? new RequestSpan(span, res) : undefined;
  }

  /** Ends the span once (later calls do nothing); with the response's status code when it is known. */
  end(statusCode?: number): void {
    if (this.#ended) return;
    this.#ended = true;
    if (statusCode !== undefined) {
      this.span.setAttribute('http.response.status_code', statusCode);
      if (statusCode >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end();
  }
}

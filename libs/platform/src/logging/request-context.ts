import { AsyncLocalStorage } from 'node:async_hooks';

/** What every log line and operation log row of one request can see. */
export interface RequestContext {
  requestId: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

export const currentRequestId = (): string | null => requestContext.getStore()?.requestId ?? null;

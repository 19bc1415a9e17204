/** One JSON call to an admin router app through supertest, with a bearer token; the status and the parsed body. */
import type { Express } from 'express';
import request from 'supertest';

export async function call(app: Express, method: 'GET' | 'POST', path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const req = (method === 'GET' ? request(app).get(path) : request(app).post(path)).set('authorization', `Bearer ${token}`);
  const res = body === undefined ? await req : await req.send(body as object);
  return { status: res.status, body: res.body };
}

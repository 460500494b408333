import type { TestApp } from '../test-app';

/** The user card object of the API (spec 3 "User card"). */
export interface UserCardJson {
  id: string;
  name: string;
  status: 'active' | 'disabled' | 'deleted';
  snapshot: Record<string, unknown>;
  revision: number;
  created_at: number;
  updated_at: number;
}

let counter = 0;

/** Creates a card through `POST /users` and expects 201. The name is unique unless one is given. */
export async function createUserCard(
  t: TestApp,
  apiKey: string,
  snapshot: Record<string, unknown> = {},
): Promise<UserCardJson> {
  counter += 1;
  const res = await t.http
    .post('/users')
    .set('x-api-key', apiKey)
    .send({ snapshot: { name: `Persona ${counter}-${Date.now()}`, ...snapshot } });
  if (res.status !== 201) throw new Error(`POST /users answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data as UserCardJson;
}

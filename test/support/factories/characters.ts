import { ADMIN_KEY, type TestApp } from '../test-app';

/** The import response of `POST /import/character` with `create_session: false`. */
export interface ImportedCharacter {
  id: string;
  versionId: string;
  body: Record<string, unknown>;
}

/** A minimal `chara_card_v2` card; `data` fields override the defaults. */
export function characterCard(data: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    spec: 'chara_card_v2',
    spec_version: '2.0',
    data: {
      name: 'Factory Character',
      description: 'A character of the tests.',
      first_mes: 'Hi {{user}}',
      ...data,
    },
  };
}

/** Imports a card through `POST /import/character` without a session and expects 201. */
export async function importCharacter(
  t: TestApp,
  options: { apiKey?: string; payload?: Record<string, unknown> } = {},
): Promise<ImportedCharacter> {
  const res = await t.http
    .post('/import/character')
    .set('x-api-key', options.apiKey ?? ADMIN_KEY)
    .send({ payload: options.payload ?? characterCard(), create_session: false });
  if (res.status !== 201) {
    throw new Error(`POST /import/character answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  const data = res.body.data as { character_id: string; character_version_id: string };
  return { id: data.character_id, versionId: data.character_version_id, body: res.body.data };
}

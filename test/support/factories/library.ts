import type { TestApp } from '../test-app';

/** Ids of one of each library asset, made through the import routes, for tests that bind sessions to them. */
export interface LibraryIds {
  character_id: string;
  character_version_id: string;
  user_card_id: string;
  preset_id: string;
  worldbook_ids: string[];
  regex_profile_id: string;
}

let counter = 0;

export async function createWorldbook(
  t: TestApp,
  apiKey: string,
  name = `Book ${++counter}`,
): Promise<string> {
  const res = await t.http
    .post('/import/worldbook')
    .set('x-api-key', apiKey)
    .send({ name, data: { entries: { 0: { uid: 0, key: ['k'], content: 'c' } } } });
  if (res.status !== 201)
    throw new Error(`worldbook import failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

export async function createLibrary(
  t: TestApp,
  apiKey: string,
  options: { worldbooks?: number } = {},
): Promise<LibraryIds> {
  const as = (path: string, body: object) => t.http.post(path).set('x-api-key', apiKey).send(body);
  const character = await as('/import/character', {
    create_session: false,
    payload: {
      spec: 'chara_card_v2',
      spec_version: '2.0',
      data: { name: `Char ${++counter}`, first_mes: 'Hello' },
    },
  });
  const user = await as('/users', { snapshot: { name: `Persona ${++counter}` } });
  const preset = await as('/import/preset', { name: 'Preset', data: { prompts: [] } });
  const regex = await as('/import/regex', {
    name: 'Rules',
    data: [{ scriptName: 's', findRegex: 'a', replaceString: 'b', placement: [2] }],
  });
  for (const res of [character, user, preset, regex]) {
    if (res.status !== 201)
      throw new Error(`library setup failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  const worldbook_ids: string[] = [];
  for (let i = 0; i < (options.worldbooks ?? 1); i++) worldbook_ids.push(await createWorldbook(t, apiKey));
  return {
    character_id: character.body.data.character_id,
    character_version_id: character.body.data.character_version_id,
    user_card_id: user.body.data.id,
    preset_id: preset.body.data.id,
    worldbook_ids,
    regex_profile_id: regex.body.data.id,
  };
}

import { inTransaction, llmProfileSecretsRepository, type Db } from '@hearth/persistence';
import { SecretBox, SecretFormatError, secretUnavailable } from './secret-box';

export interface RotationProgress {
  /** Profiles looked at so far. */
  scanned: number;
  /** Re-encrypted under the current key. */
  rotated: number;
  /** Already under the current key: left as they were. */
  current: number;
  /** Could not be decrypted with any configured key: left as they were. */
  failed: number;
}

export interface RotationReport extends RotationProgress {
  currentKeyId: string;
  /** Ids (never ciphertexts) of the profiles that could not be decrypted. */
  failedIds: string[];
  batches: number;
}

export interface RotateSecretsOptions {
  batchSize?: number;
  /** Called after each committed batch with the running totals. */
  onBatch?: (progress: RotationProgress) => void;
}

/**
 * Re-encrypts every stored model API key (`llm_profiles.api_key_ciphertext`, all accounts, every
 * status) under the current master key. Batches of `batchSize` in id order, each batch locked and
 * rewritten in one transaction (a failure rolls back that batch only; earlier batches stay rotated and a
 * re-run continues). Ciphertexts already under the current key are skipped, so the command is
 * idempotent. A ciphertext that no configured key can read is counted and left alone.
 */
export async function rotateSecrets(
  db: Db,
  box: SecretBox,
  options: RotateSecretsOptions = {},
): Promise<RotationReport> {
  if (!box.currentKeyId) throw secretUnavailable();
  const batchSize = options.batchSize ?? 200;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error('batchSize must be a positive integer');
  const report: RotationReport = {
    currentKeyId: box.currentKeyId,
    scanned: 0,
    rotated: 0,
    current: 0,
    failed: 0,
    failedIds: [],
    batches: 0,
  };
  let afterId: string | null = null;
  for (;;) {
    const batch = await inTransaction(db, async ({ tx }) => {
      const rows = await llmProfileSecretsRepository.lockBatchAfter(tx, afterId, batchSize);
      const counts = { rotated: 0, current: 0, failedIds: [] as string[] };
      for (const row of rows) {
        if (box.isCurrent(row.api_key_ciphertext)) {
          counts.current++;
          continue;
        }
        let plaintext: string;
        try {
          plaintext = box.decrypt(row.api_key_ciphertext);
        } catch (error) {
          if (!(error instanceof SecretFormatError)) throw error;
          counts.failedIds.push(row.id);
          continue;
        }
        const renewed = box.encrypt(plaintext);
        // The row is locked, so the expected ciphertext is still there.
        await llmProfileSecretsRepository.replaceCiphertext(tx, row.id, row.api_key_ciphertext, renewed);
        counts.rotated++;
      }
      return { rows, ...counts };
    });
    if (batch.rows.length === 0) break;
    afterId = batch.rows[batch.rows.length - 1].id;
    report.batches++;
    report.scanned += batch.rows.length;
    report.rotated += batch.rotated;
    report.current += batch.current;
    report.failed += batch.failedIds.length;
    report.failedIds.push(...batch.failedIds);
    options.onBatch?.({
      scanned: report.scanned,
      rotated: report.rotated,
      current: report.current,
      failed: report.failed,
    });
    if (batch.rows.length < batchSize) break;
  }
  return report;
}

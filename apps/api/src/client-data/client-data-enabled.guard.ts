import { type CanActivate, Inject, Injectable } from '@nestjs/common';
import { requireClientDataEnabled } from '@hearth/app';
import { CONFIG, type AppConfig } from '@hearth/platform';

/**
 * 503 `feature_unavailable` on every client data route while `ENABLE_CLIENT_DATA` is off. A guard
 * runs after the global auth guard and before the validation pipe, so the 503 comes before any 400
 * or 404 (the use cases check it again for other callers).
 */
@Injectable()
export class ClientDataEnabledGuard implements CanActivate {
  constructor(@Inject(CONFIG) private readonly config: AppConfig) {}

  canActivate(): boolean {
    requireClientDataEnabled(this.config);
    return true;
  }
}

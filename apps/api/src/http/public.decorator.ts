import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'hearth:public';
/** Marks an operational route that needs no `x-api-key` (CONTRACT.md "Credentials"). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

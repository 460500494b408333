import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { PlatformResources } from '@hearth/platform';
import { ApiModule } from './api.module';
import { BODY_BUFFER_BUDGET, type BodyBufferBudget } from './http/body-budget';
import { EnvelopeExpressAdapter } from './http/envelope';
import { bodyParserErrorHandler, jsonBodyParser, requestIdAndAccessLog } from './http/request-pipeline';
import { createValidationPipe } from './http/validation';

/**
 * Builds the API application on resources opened by the caller (the entry point or a test). The
 * caller listens and closes; closing the app does not close the resources.
 */
export async function createApiApp(resources: PlatformResources): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    ApiModule.register(resources),
    new EnvelopeExpressAdapter(),
    {
      bodyParser: false,
      logger: resources.logger,
      abortOnError: false,
    },
  );
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestIdAndAccessLog(resources.logger, resources.metrics));
  app.use(jsonBodyParser(resources.config.bodyLimitBytes, app.get<BodyBufferBudget>(BODY_BUFFER_BUDGET)));
  app.use(bodyParserErrorHandler());
  app.useGlobalPipes(createValidationPipe());

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Hearth')
      .setDescription('A headless conversation backend for roleplay and character-chat applications.')
      .setVersion('0.1.0')
      .addApiKey({ type: 'apiKey', name: 'x-api-key', in: 'header' }, 'x-api-key')
      .addSecurityRequirements('x-api-key')
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', raw: ['json'] });
  return app;
}

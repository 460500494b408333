'use strict';
// The built libraries (`npm run build` output), so the benchmarks run Hearth's real code paths.
require('reflect-metadata');
const { join } = require('node:path');
const { DIST_API } = require('./harness');

const lib = (path) => require(join(DIST_API, 'libs', path));

module.exports = {
  persistence: () => lib('persistence/src/index.js'),
  domain: () => lib('domain/src/index.js'),
  platform: () => lib('platform/src/index.js'),
  projectEventWriter: () => lib('app/src/events/project-event-writer.js'),
};

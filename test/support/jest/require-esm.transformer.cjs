// Node 20.19+ lets CommonJS packages require() ES modules (@nestjs/throttler requires the ESM-only @nestjs/common
// and @nestjs/core 12); Jest's module loader does not before Node 24.9. For the CommonJS packages listed in
// jest.config.js, this transform turns those require() calls into the ES module namespaces preload-esm.ts
// imported, the same module instances the application uses, so classes such as Reflector stay one class.
const ESM_ONLY = ['@nestjs/common', '@nestjs/core'];
const pattern = new RegExp(
  `require\\((["'])(${ESM_ONLY.map((name) => name.replace('/', '\\/')).join('|')})\\1\\)`,
  'g',
);

module.exports = {
  process(source) {
    return {
      code: source.replace(pattern, (_call, _quote, name) => `globalThis.__preloadedEsm[${JSON.stringify(name)}]`),
    };
  },
  getCacheKey(source, path) {
    return `${path}:${require('node:crypto').createHash('sha1').update(source).digest('hex')}:1`;
  },
};

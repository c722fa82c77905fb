// See require-esm.transformer.cjs: the ESM-only modules that CommonJS packages require, loaded before each test file.
import * as common from '@nestjs/common';
import * as core from '@nestjs/core';

(globalThis as { __preloadedEsm?: Record<string, unknown> }).__preloadedEsm = {
  '@nestjs/common': common,
  '@nestjs/core': core,
};

#!/usr/bin/env node
import { execute } from '@oclif/core';

// Stack traces under GOBSTOPPER_DEBUG name TypeScript files and lines instead of bundle chunks.
if (process.env.GOBSTOPPER_DEBUG) process.setSourceMapsEnabled(true);

await execute({ dir: import.meta.url });

// ESLint flat config: the recommended rules plus typescript-eslint's
// type-aware ones, for src and test.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/explicit-function-return-type': ['error', { allowExpressions: true }],
    },
  },
  { ignores: ['out/**', 'out-test/**', 'out-tsc/**', 'eslint.config.mjs'] },
);

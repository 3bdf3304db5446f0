// Flat ESLint config: recommended JS + typescript-eslint rules; Node globals for scripts;
// import-x/no-cycle keeps the source's imports acyclic (a 13-module cycle through the view
// registry was broken once; this keeps it from coming back).
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '../tensorboard_plugin_profile/static/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts'],
    languageOptions: { globals: globals.browser },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      'import-x/extensions': ['.ts'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[property.name='innerHTML']", message: 'Render profile strings as text.' },
        { selector: "MemberExpression[property.name='outerHTML']", message: 'Render profile strings as text.' },
        { selector: "CallExpression[callee.property.name='insertAdjacentHTML']", message: 'Render profile strings as text.' },
      ],
      'no-restricted-imports': [
        'error',
        { paths: ['lit/directives/unsafe-html.js', 'lit/directives/unsafe-svg.js'] },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['e2e/**/*.mjs', '*.config.{js,ts}', 'public/**/*.js'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
);

// Flat ESLint config: recommended JS + typescript-eslint rules; Node globals for scripts.
// Import cycles are checked by src/import-cycles.test.ts (no plugin: the usual ones need native
// resolver bindings that npm cannot lock for every platform).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '../tensorboard_plugin_profile/static/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts'],
    languageOptions: { globals: globals.browser },
    rules: {
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

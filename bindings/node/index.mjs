// The ES module of the package: the same `withToolErrors` as index.cjs.
import toolErrors from './index.cjs';

export const { withToolErrors } = toolErrors;

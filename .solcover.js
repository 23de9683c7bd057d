// Coverage of contracts/ outside mocks, measured by the contract suite (npm run coverage).
module.exports = {
  skipFiles: ["mocks/"],
  configureYulOptimizer: true,
};

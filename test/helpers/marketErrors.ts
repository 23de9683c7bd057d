/** Assertions on the SDK's typed refusals (MarketError and its `code`). */
import { expect } from "chai";
import { isMarketError, type MarketError } from "../../client/sdk/index";

/** Awaits `promise` and expects it to reject with a MarketError of `code` (recorded in `seen` when given). */
export async function expectCode(promise: Promise<unknown>, code: string, seen?: Set<string>): Promise<MarketError> {
  try {
    await promise;
  } catch (error) {
    expect(isMarketError(error), String(error)).to.equal(true);
    expect((error as MarketError).code, (error as Error).message).to.equal(code);
    seen?.add(code);
    return error as MarketError;
  }
  return expect.fail(`expected ${code}`);
}

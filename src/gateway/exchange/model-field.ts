/** The `model` field every conversation request carries: checked before admission, which matches it. */
import { AppError } from "../../errors";
import { modelNameProblem } from "../limits/rules/model-match";

export function requireModel(body: Record<string, unknown>): string {
  const model = body.model;
  if (typeof model !== "string" || model.trim() === "") {
    throw new AppError("invalid_request", "'model' is required and must be a non-empty string.", { param: "model" });
  }
  // Before the name is matched, logged or quoted in an error: a caller's 15 MB name stays out of both.
  const problem = modelNameProblem(model);
  if (problem !== null) throw new AppError("invalid_request", `'model' ${problem}.`, { param: "model", rawCode: "invalid_model" });
  return model;
}

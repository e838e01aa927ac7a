//! Replaying from answers (EA's lost `#replaying-from-answers`, reconstructed in
//! docs/spec/engine-interface.md): startAction's `answers` are taken in order, one per pause, as
//! successive continueAction calls would give them. A run is a pure function of its inputs, its
//! answers and the engine's recorded faces, so continuing runs the action again from the start:
//! a replay gives the same result byte for byte.

use crate::error::ActionError;
use crate::state::Answer;

/// The answer a pause of `kind` at `path` takes: `answer-mismatch` when it answers another kind
/// of pause or names another step.
pub fn expect_answer<'a>(
    answer: &'a Answer,
    kind: &str,
    path: &str,
) -> Result<&'a Answer, ActionError> {
    let mismatch = |why: String| {
        ActionError::new("answer-mismatch", why)
            .with("step", path)
            .with("expected", kind)
    };
    if let Some(step) = &answer.step
        && step != path
    {
        return Err(mismatch(format!(
            "the answer is for step `{step}`, but the action paused at `{path}`"
        )));
    }
    if answer.kind() != kind {
        return Err(mismatch(format!(
            "the action paused for {kind}, but the answer gives {}",
            answer.kind()
        )));
    }
    Ok(answer)
}

//! Random draws (DA "Random picks"): while a choice or allocate step's `random` holds, its
//! recommendation is drawn with one die as large as what it draws among, "logged and paused for
//! like any die": the dice policy decides, an automatic draw takes the engine's face (kept in the
//! state, as a roll's), and a paused one asks for `{ faces: [f] }` with `needs.draw.among`.

use ocf_dice::{FaceReason, FaceRequest};
use ocf_syntax::dice::Die;
use serde_json::json;

use crate::error::ActionError;
use crate::run::{Frame, Run, StepAt, Stop};
use crate::state::Then;

/// Draws one of `among` (not empty): its index.
pub fn draw<'db>(
    run: &mut Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
    tags: &[crate::tag::Tag],
    among: &[String],
) -> Result<usize, Stop> {
    let sides = among.len() as u32;
    let die = Die::Sides(sides);
    let (face, by) = match run.checkpoints.decide("roll", tags, &at.path) {
        Then::Auto => {
            let request = FaceRequest {
                die,
                reason: FaceReason::Initial,
                item: 0,
                die_index: 0,
            };
            let face = run.checkpoints.engine_face(&request).map_err(|e| {
                ActionError::new("dice-error", format!("no face for the draw: {e:?}"))
            })?;
            (face, "engine")
        }
        Then::Pause => match run.checkpoints.take_answer() {
            None => {
                return Err(Stop::Pause(json!({
                    "kind": "dice",
                    "step": at.path,
                    "action": frame.id,
                    "dice": [{ "item": 0, "count": 1, "sides": sides }],
                    "draw": { "among": among },
                })));
            }
            Some(answer) => {
                let answer = crate::replay::expect_answer(answer, "dice", &at.path)?;
                let faces = answer.faces.clone().unwrap_or_default();
                if faces.len() != 1 {
                    return Err(ActionError::new(
                        "answer-mismatch",
                        format!("a draw takes one face, not {}", faces.len()),
                    )
                    .with("step", at.path.as_str())
                    .with("expected", 1)
                    .into());
                }
                (faces[0], "app")
            }
        },
    };
    if face < 1 || face > i64::from(sides) {
        return Err(ActionError::new(
            "invalid-face",
            format!("{face} is not a face of a d{sides}"),
        )
        .with("face", face)
        .into());
    }
    run.log.push(json!({
        "step": at.path, "action": frame.id, "kind": "dice", "by": by, "faces": [face],
        "draw": { "among": among },
    }));
    Ok((face - 1) as usize)
}

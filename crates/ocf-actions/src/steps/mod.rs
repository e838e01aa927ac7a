//! Running the steps (EA "Other steps", "Each steps"): the dispatch of a list of steps to each
//! step kind, one module a kind, and the `outcome` step. The run's shared state ([`Run`]) and
//! one running action ([`Frame`]) are [`crate::run`]'s, below this and [`crate::roll`].

pub mod action;
pub mod allocate;
pub mod branch;
pub mod changes;
pub mod choice;
pub mod draw;
pub mod each;
pub mod pending;
pub mod resolve;
pub mod substitute;

use ocf_formula::Value;
use ocf_model::{Step, StepKind};
use serde_json::{Value as Json, json};

use crate::context::set_member;
use crate::error::ActionError;
use crate::roll::classify::check_result;
use crate::run::{Flow, Frame, Run, StepAt, Stop, data_json};

impl<'db> Run<'db, '_> {
    /// Runs `steps` of `frame`, their paths under `prefix`.
    pub fn run_steps(
        &mut self,
        frame: &mut Frame<'db>,
        steps: &'db [Step],
        prefix: &str,
        participant: Option<(&str, usize, Value)>,
    ) -> Result<Flow, Stop> {
        for step in steps {
            let path = format!("{prefix}{}", step.id);
            let span = tracing::info_span!("action.step", step = %path, kind = step.kind.name());
            let _guard = span.enter();
            match (&step.each, &participant) {
                (Some(role), None) if step.kind != StepKind::Outcome => {
                    if let Flow::Done(o) = each::run_each(self, frame, step, &path, role)? {
                        return Ok(Flow::Done(o));
                    }
                }
                _ => {
                    let (view, role, index) = match &participant {
                        Some((role, i, view)) => {
                            (Some(view.clone()), Some(role.to_string()), Some(*i))
                        }
                        None => (None, None, None),
                    };
                    let at = StepAt {
                        step,
                        path,
                        participant: view,
                        role,
                        index,
                    };
                    self.count_step(&at.path)?;
                    match self.run_one(frame, &at)? {
                        (Flow::Done(o), _) => return Ok(Flow::Done(o)),
                        (Flow::Next, Some(value)) => set_member(&mut frame.steps, &step.id, value),
                        (Flow::Next, None) => {}
                    }
                }
            }
        }
        Ok(Flow::Next)
    }

    /// One step (one run of an `each` step) on its sheet: the character as given, or with
    /// `sheet: proposed` the proposed sheet (EA "The proposed sheet"), built before its `when`.
    pub(crate) fn run_one(
        &mut self,
        frame: &mut Frame<'db>,
        at: &StepAt<'db>,
    ) -> Result<(Flow, Option<Value>), Stop> {
        let given = *self.sheets.given.get_or_insert(self.character);
        let before = self.character;
        self.character = match at.step.sheet {
            Some(ocf_model::Sheet::Proposed) => self
                .sheets
                .build(self.db, &self.proposed, &at.path)
                .map_err(|e| Stop::Fail(e.at(&at.path)))?,
            _ => given,
        };
        let r = self.run_step(frame, at);
        self.character = before;
        r
    }

    /// The character the step reads now: for `sheet: proposed`, rebuilt (a choice's next pick).
    pub fn rebuild(&mut self, at: &StepAt<'db>) -> Result<(), ActionError> {
        if at.step.sheet == Some(ocf_model::Sheet::Proposed) {
            self.character = self
                .sheets
                .build(self.db, &self.proposed, &at.path)
                .map_err(|e| e.at(&at.path))?;
        }
        Ok(())
    }

    /// One step (one run of an `each` step): its flow and its result, `None` when it has none
    /// (skipped, or a kind without a result).
    fn run_step(
        &mut self,
        frame: &mut Frame<'db>,
        at: &StepAt<'db>,
    ) -> Result<(Flow, Option<Value>), Stop> {
        let step = at.step;
        // The step's context, which a roll or changes step goes on using: nothing between reads
        // differently.
        let mut step_ctx = None;
        if let Some(when) = &step.when {
            let ctx = self.ctx(frame, Some(at));
            if !ctx.condition(when.as_str()).map_err(|e| e.at(&at.path))? {
                return Ok((Flow::Next, None));
            }
            step_ctx = Some(ctx);
        }
        let fail_at = |s: Stop| match s {
            Stop::Fail(e) => Stop::Fail(e.at(&at.path)),
            pause => pause,
        };
        match step.kind {
            StepKind::Roll => {
                let r = crate::roll::roll_step(self, frame, at, step_ctx).map_err(fail_at)?;
                Ok((Flow::Next, r))
            }
            StepKind::Branch => branch::run(self, frame, at)
                .map(|f| (f, None))
                .map_err(fail_at),
            StepKind::Changes => {
                changes::run(self, frame, at, step_ctx).map_err(|e| Stop::Fail(e.at(&at.path)))?;
                Ok((Flow::Next, None))
            }
            StepKind::Action => action::run(self, frame, at).map_err(fail_at),
            StepKind::Choice => choice::run(self, frame, at).map_err(fail_at),
            StepKind::Outcome => {
                let outcome = outcome(self, frame, at).map_err(|e| e.at(&at.path))?;
                Ok((Flow::Done(outcome), None))
            }
            StepKind::Allocate => allocate::run(self, frame, at).map_err(fail_at),
        }
    }
}

/// An `outcome` step: `result` (a string) and `data`, checked against the action's `results`.
fn outcome<'db>(
    run: &Run<'db, '_>,
    frame: &Frame<'db>,
    at: &StepAt<'db>,
) -> Result<Json, ActionError> {
    let ctx = run.ctx(frame, Some(at));
    let mut out = serde_json::Map::new();
    if let Some(result) = &at.step.result {
        let value = ctx.eval(result.as_str())?;
        let Value::String(text) = &value else {
            return Err(ActionError::new(
                "type-mismatch",
                format!(
                    "an outcome's result is a string, not a {}",
                    value.type_name()
                ),
            ));
        };
        check_result(run.ruleset, frame, text)?;
        out.insert("result".into(), json!(text.as_ref()));
    }
    if !at.step.data.is_empty() {
        let mut data = serde_json::Map::new();
        for (key, formula) in at.step.data.iter() {
            data.insert(key.to_owned(), data_json(&ctx.eval(formula.as_str())?));
        }
        out.insert("data".into(), Json::Object(data));
    }
    Ok(Json::Object(out))
}

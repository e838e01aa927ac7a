//! Branch steps (EA "Other steps"): the first case whose `when` holds, else `else`; its `flags`
//! are evaluated and set, then its steps run at `<branch>/<step>`.

use crate::context::set_members;
use crate::run::{Flow, Frame, Run, StepAt, Stop};

pub fn run<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    at: &StepAt<'db>,
) -> Result<Flow, Stop> {
    let step: &'db ocf_model::Step = at.step;
    let ctx = run.ctx(frame, Some(at));
    let mut chosen = None;
    for case in &step.cases {
        if ctx.condition(case.when.as_str())? {
            chosen = Some((&case.flags, &case.steps));
            break;
        }
    }
    let (flags, steps) = match chosen {
        Some(c) => c,
        None => match &step.r#else {
            Some(e) => (&e.flags, &e.steps),
            None => return Ok(Flow::Next),
        },
    };
    // Every flag of the case is evaluated before any is set: they read the flags as they were.
    let mut values = Vec::new();
    for (name, formula) in flags.iter() {
        values.push((name.to_owned(), ctx.eval(formula.as_str())?));
    }
    drop(ctx);
    set_members(&mut frame.flags, values);
    let prefix = format!("{}/", at.path);
    let participant = match (&at.role, &at.participant) {
        (Some(role), Some(view)) => Some((role.as_str(), 0, view.clone())),
        _ => None,
    };
    run.run_steps(frame, steps, &prefix, participant)
}

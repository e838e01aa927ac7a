//! Each steps (EA "Each steps"): a step run once per participant of a role, in input order.
//!
//! Each run gets its own path (`saves[1]`) and sees, for every earlier step or flag that is per
//! participant of the same role, the current participant's value instead of the list. The run
//! works on the frame's own `steps` and `flags` with that view swapped in; what it sets (a branch's
//! flags, a case's steps) is taken back out afterwards and kept per participant, so everything
//! that reads those maps (formulas, `split`, `of`) sees the chapter's values without knowing it is
//! inside a run. Nested actions' step results (`frame.nested`, which `of` paths read) are kept the
//! same way, so `of: check/roll` in a later run over the role names the current participant's run
//! of `check` (EA "Classifying an earlier roll again" 1), not the last one.

use ocf_formula::Value;
use ocf_model::{Step, StepKind};

use crate::context::{member, set_member};
use crate::run::{Flow, Frame, PerParticipant, Root, Run, StepAt, Stop};

/// Runs `step` once per participant of `role`, at `path[i]`.
pub fn run_each<'db>(
    run: &mut Run<'db, '_>,
    frame: &mut Frame<'db>,
    step: &'db Step,
    path: &str,
    role: &str,
) -> Result<Flow, Stop> {
    let views = match member(&frame.participants, role) {
        Some(Value::List(l)) => (**l).clone(),
        _ => Vec::new(),
    };
    // With no participants the step doesn't run, and `steps.<id>` stays absent.
    if views.is_empty() {
        return Ok(Flow::Next);
    }
    let n = views.len();
    let mut results: Vec<Value> = Vec::new();
    // What the runs set in `steps` and `flags`, by name: one slot per participant.
    let mut set: Vec<(Root, String, Vec<Value>)> = Vec::new();
    for (i, view) in views.into_iter().enumerate() {
        let saved = (
            frame.steps.clone(),
            frame.flags.clone(),
            frame.nested.clone(),
        );
        let (mut steps, flags, nested) = current(frame, role, i);
        // Inside run i, `steps.<id>` is the runs before it (absent in the first).
        if i > 0 {
            set_member(&mut steps, &step.id, Value::list(results.clone()));
        } else {
            remove_member(&mut steps, &step.id);
        }
        frame.steps = steps.clone();
        frame.flags = flags.clone();
        frame.nested = nested.clone();
        let at = StepAt {
            step,
            path: format!("{path}[{i}]"),
            participant: Some(view),
            role: Some(role.to_owned()),
            index: Some(i),
        };
        run.count_step(&at.path)?;
        let flow = run.run_one(frame, &at)?;
        for (root, before, after) in [
            (Root::Steps, &steps, &frame.steps),
            (Root::Flags, &flags, &frame.flags),
            (Root::Nested, &nested, &frame.nested),
        ] {
            for (name, value) in changed(before, after) {
                if root == Root::Steps && name == step.id {
                    continue;
                }
                let slot = match set
                    .iter_mut()
                    .position(|(r, s, _)| *r == root && *s == name)
                {
                    Some(p) => p,
                    None => {
                        set.push((root, name, vec![Value::Null; n]));
                        set.len() - 1
                    }
                };
                set[slot].2[i] = value;
            }
        }
        (frame.steps, frame.flags, frame.nested) = saved;
        match flow {
            (Flow::Done(o), _) => return Ok(Flow::Done(o)),
            (Flow::Next, value) => results.push(value.unwrap_or(Value::Null)),
        }
    }
    if step.kind != StepKind::Branch {
        set.push((Root::Steps, step.id.clone(), results));
    }
    for (root, name, values) in set {
        let list = Value::list(values);
        let map = match root {
            Root::Steps => &mut frame.steps,
            Root::Flags => &mut frame.flags,
            Root::Nested => &mut frame.nested,
        };
        set_member(map, &name, list.clone());
        frame
            .per_participant
            .retain(|p| !(p.root == root && p.name == name));
        frame.per_participant.push(PerParticipant {
            root,
            name,
            role: role.to_owned(),
            list,
        });
    }
    Ok(Flow::Next)
}

/// The frame's `steps`, `flags` and `nested` as participant `i` of `role` sees them: each value
/// kept per participant of that role is the participant's own, absent where it is null.
fn current(frame: &Frame<'_>, role: &str, i: usize) -> (Value, Value, Value) {
    let (mut steps, mut flags, mut nested) = (
        frame.steps.clone(),
        frame.flags.clone(),
        frame.nested.clone(),
    );
    for p in frame.per_participant.iter().filter(|p| p.role == role) {
        let map = match p.root {
            Root::Steps => &mut steps,
            Root::Flags => &mut flags,
            Root::Nested => &mut nested,
        };
        if member(map, &p.name) != Some(&p.list) {
            continue;
        }
        match &p.list {
            Value::List(l) if !matches!(l.get(i), None | Some(Value::Null)) => {
                set_member(map, &p.name, l[i].clone())
            }
            _ => remove_member(map, &p.name),
        }
    }
    (steps, flags, nested)
}

/// The members of `after` that `before` lacks or holds another value for.
fn changed(before: &Value, after: &Value) -> Vec<(String, Value)> {
    let Value::Map(after) = after else {
        return Vec::new();
    };
    after
        .iter()
        .filter(|(k, v)| member(before, k) != Some(*v))
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn remove_member(value: &mut Value, key: &str) {
    if let Value::Map(m) = value
        && m.contains_key(key)
    {
        std::sync::Arc::make_mut(m).remove(key);
    }
}

//! Load checks on actions' steps (EA): the roles a step runs over or sends changes to
//! (`unknown-role`), the steps an `of` path or a `release` names (`unknown-reference`, kind `step`),
//! and a `split` adjust's field, which is always written out (`formula-error`, cause
//! `type-mismatch`).

use ocf_model::{Action, Change, Computed, Destination, PackRelease, Step, StepOptions};

use crate::error::{LoadErrorRecord, content_path, rules_path};

/// Every error of the actions of `releases`, in document order.
pub fn check(releases: &[PackRelease]) -> Result<(), Vec<LoadErrorRecord>> {
    let mut errors = Vec::new();
    for release in releases {
        let pack = release.id.as_str();
        let rules = &release.rules;
        let mut c = Checker {
            pack,
            path: rules_path(pack),
            errors: &mut errors,
        };
        c.actions(&rules.actions);
        for (_, ty) in rules.content_types.iter() {
            c.actions(&ty.actions);
        }
        for (index, item) in release.content.iter().enumerate() {
            c.path = content_path(pack, index);
            c.actions(&item.actions);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

struct Checker<'a> {
    pack: &'a str,
    path: String,
    errors: &'a mut Vec<LoadErrorRecord>,
}

/// What a step of one action may name: its roles and every step ID written in it.
struct Scope<'a> {
    action: &'a Action,
    steps: Vec<&'a str>,
}

impl Checker<'_> {
    fn actions(&mut self, actions: &[Action]) {
        for action in actions {
            let mut steps = Vec::new();
            step_ids(&action.steps, &mut steps);
            let scope = Scope { action, steps };
            self.steps(&scope, &action.steps, false);
        }
    }

    fn steps(&mut self, scope: &Scope<'_>, steps: &[Step], in_case: bool) {
        for step in steps {
            self.step(scope, step, in_case);
        }
    }

    fn step(&mut self, scope: &Scope<'_>, step: &Step, in_case: bool) {
        if let Some(role) = &step.each {
            // EA, "Each steps": a branch case's steps "may not have an `each` of their own
            // (`unknown-role` at load)".
            if in_case {
                self.role(step, role, "a branch case's step runs per participant of its branch; it may not have its own `each`");
            } else if !declared(scope.action, role) {
                self.role(step, role, "the action declares no such participant role");
            }
        }
        if let Some(Destination::Named(to)) = &step.to
            && to != "self"
            && !declared(scope.action, to)
        {
            self.role(
                step,
                to,
                "`to` names a participant role the action doesn't declare",
            );
        }
        if let Some(StepOptions::Written(options)) = &step.options {
            for option in options {
                if let Some(Destination::Named(to)) = &option.to
                    && to != "self"
                    && !declared(scope.action, to)
                {
                    self.role(
                        step,
                        to,
                        "an option's `to` names a participant role the action doesn't declare",
                    );
                }
                self.changes(&option.changes);
            }
        }
        // EA "Rolling": "At load, the path's first step must be a step of the action
        // (`unknown-reference`, kind `step`)"; likewise `release.steps` (catalogue §5.1).
        if let Some(of) = &step.of {
            self.step_path(scope, of);
        }
        if let Some(release) = &step.release {
            for path in &release.steps {
                self.step_path(scope, path);
            }
        }
        self.changes(&step.changes);
        for case in &step.cases {
            self.steps(scope, &case.steps, true);
        }
        if let Some(otherwise) = &step.r#else {
            self.steps(scope, &otherwise.steps, true);
        }
    }

    fn role(&mut self, step: &Step, role: &str, why: &str) {
        self.errors.push(
            LoadErrorRecord::new(
                "unknown-role",
                format!("step `{}` at {}: `{role}`: {why}", step.id, self.path),
            )
            .at(self.path.clone())
            .with("role", role)
            .with("step", step.id.as_str())
            .with("pack", self.pack),
        );
    }

    fn step_path(&mut self, scope: &Scope<'_>, path: &str) {
        let first = path.split('/').next().unwrap_or_default();
        let first = first.split('[').next().unwrap_or_default();
        if !scope.steps.contains(&first) {
            self.errors.push(
                LoadErrorRecord::new(
                    "unknown-reference",
                    format!(
                        "the step path `{path}` at {} starts with `{first}`, which is no step of the action",
                        self.path
                    ),
                )
                .at(self.path.clone())
                .with("id", first)
                .with("kind", "step")
                .with("pack", self.pack),
            );
        }
    }

    /// EA "Other steps": "A `split` adjust ... its field is always written out (a computed one is a
    /// load error, `formula-error` with cause `type-mismatch`)."
    fn changes(&mut self, changes: &[Change]) {
        for change in changes {
            if change.split.is_some()
                && let Some(Computed::Formula { formula }) = &change.field
            {
                self.errors.push(
                    LoadErrorRecord::new(
                        "formula-error",
                        format!(
                            "a `split` adjust at {} computes its field `{}`; a split's field is written out",
                            self.path,
                            formula.as_str()
                        ),
                    )
                    .at(self.path.clone())
                    .with("cause", "type-mismatch")
                    .with("pack", self.pack)
                    .with("formula", formula.as_str()),
                );
            }
        }
    }
}

/// Whether `role` is one the action declares; `target` needs no declaration (DA: "`to: target`,
/// which needs no declaration"; decisions.md, "Undeclared roles").
fn declared(action: &Action, role: &str) -> bool {
    role == "target" || action.participants.get(role).is_some()
}

/// Every step ID written in `steps`, branch cases' included.
fn step_ids<'a>(steps: &'a [Step], out: &mut Vec<&'a str>) {
    for step in steps {
        out.push(step.id.as_str());
        for case in &step.cases {
            step_ids(&case.steps, out);
        }
        if let Some(otherwise) = &step.r#else {
            step_ids(&otherwise.steps, out);
        }
    }
}

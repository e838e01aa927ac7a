//! The build's static checks over what the walk found in one document: references resolve, tags are
//! declared, formulas parse, and activation conditions read only input fields. loadRuleset leaves
//! these to the build (engine-core: "Other tags are checked by the build only"; "Every formula must
//! parse and type-check as in the build").

use ocf_formula::lowered::Expr;

use super::locations::Locations;
use super::names::{Resolved, Scope};
use super::problem::{Position, Problem};
use super::walk::{FormulaUse, RefKind, Uses};

/// One document's checks.
pub struct DocumentChecks<'a> {
    pub file: &'a str,
    pub locations: &'a Locations,
    pub scope: &'a Scope<'a>,
    /// Whether every rules file (and so every declaration but content IDs) was read.
    pub rules_complete: bool,
    /// Whether every content file was read.
    pub content_complete: bool,
}

impl DocumentChecks<'_> {
    pub fn run(&self, uses: &Uses, problems: &mut Vec<Problem>) {
        for reference in &uses.refs {
            let complete = if reference.kind == RefKind::Content {
                self.content_complete
            } else {
                self.rules_complete
            };
            if !complete {
                continue;
            }
            if let Resolved::Missing(message) = self.scope.resolve(reference.kind, &reference.id) {
                problems.push(
                    self.problem("unknown-reference", message, &reference.pointer)
                        .with("id", reference.id.as_str())
                        .with("kind", reference.kind.name()),
                );
            }
        }
        if self.rules_complete {
            for used in &uses.tags {
                if self.scope.declares_tag(&used.tag) == Some(false) {
                    problems.push(
                        self.problem(
                            "unknown-tag",
                            format!("the tag `{}` is not declared", used.tag),
                            &used.pointer,
                        )
                        .with("tag", used.tag.as_str()),
                    );
                }
            }
        }
        for formula in &uses.formulas {
            self.formula(formula, problems);
        }
    }

    fn problem(&self, code: &str, message: String, pointer: &str) -> Problem {
        Problem::error(code, message)
            .in_file(self.file)
            .at(pointer, self.locations.value(pointer))
            .with("pack", self.scope.own.pack.as_str())
    }

    /// Parses the formula; an activation condition's field reads must be input fields.
    fn formula(&self, used: &FormulaUse, problems: &mut Vec<Problem>) {
        let error = |cause: &str, message: String, offset: usize| {
            let at = self.position_in(used, offset);
            Problem::error("formula-error", format!("{cause}: {message}"))
                .in_file(self.file)
                .at(&used.pointer, at)
                .with("cause", cause)
                .with("pack", self.scope.own.pack.as_str())
                .with("formula", used.text.as_str())
        };
        let parsed = crate::parsed::parse(&used.text);
        let formula = match &*parsed {
            Ok(formula) => formula,
            Err(errors) => {
                problems.extend(errors.iter().map(|e| {
                    error(
                        e.code.as_str(),
                        e.message.clone(),
                        u32::from(e.range.start()) as usize,
                    )
                }));
                return;
            }
        };
        if !used.activation {
            return;
        }
        let lowered = formula.lowered();
        for (id, expr) in lowered.exprs.iter() {
            let Expr::Field(field) = expr else {
                continue;
            };
            if self.scope.field_is_input(field) == Some(false) {
                let offset = u32::from(lowered.range(id).start()) as usize;
                problems.push(
                    error(
                        "type-mismatch",
                        format!(
                            "an activation condition reads `{field}`, which is not an input \
                             field: activation is decided before fields are computed"
                        ),
                        offset,
                    )
                    .with("field", &**field),
                );
            }
        }
    }

    /// Where byte `offset` of the formula is in the file: inside the scalar when it is written as
    /// is on one line, else the scalar's start.
    fn position_in(&self, used: &FormulaUse, offset: usize) -> Option<Position> {
        match self.locations.text(&used.pointer) {
            Some(start) => {
                let chars = used.text.get(..offset).map_or(0, |s| s.chars().count());
                Some(Position {
                    line: start.line,
                    column: start.column + chars,
                })
            }
            None => self.locations.value(&used.pointer),
        }
    }
}

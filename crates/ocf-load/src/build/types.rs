//! Type-checking every formula with loadRuleset's own checker ([`crate::formulas`]): the same
//! formulas, roots and expected types, so the build and loadRuleset can't disagree about a formula
//! (EC: "Every formula must parse and type-check as in the build"). The build maps each formula's
//! release pointer back to its source file.

use ocf_formula::Ty;
use ocf_model::{PackRelease, RulesDocument};

use super::locations::Locations;
use super::merge::Origins;
use super::problem::Problem;
use crate::formulas::{self, Document};

/// A source document: its file name, positions, and the pointer its item starts at.
pub struct Source<'a> {
    pub file: &'a str,
    pub locations: &'a Locations,
    pub prefix: String,
}

pub struct TypeCheck<'a> {
    pub release: &'a PackRelease,
    pub dependencies: &'a [&'a PackRelease],
    pub origins: &'a Origins,
    /// The rules files, in merge order.
    pub rules: Vec<Source<'a>>,
    /// Every content item's source, in release order.
    pub content: Vec<Source<'a>>,
    /// Whether a field a formula reads could be declared somewhere the build can't see (a dependency
    /// not given, a rules file that did not read): then `unknown-name` is not reported.
    pub names_incomplete: bool,
}

impl TypeCheck<'_> {
    pub fn run(&self, problems: &mut Vec<Problem>) {
        let fields = self.fields();
        let pack = self.release.id.as_str();
        let mut envs = formulas::Envs::new(&fields);
        for found in formulas::collect(self.release) {
            // Syntax errors are reported, with their ranges, by the build's own parse.
            if ocf_formula::Formula::parse(&found.text).is_err() {
                continue;
            }
            let env = envs.get(found.roots);
            let Err((code, message)) =
                formulas::check_one(&found.text, env, found.expected.as_ref())
            else {
                continue;
            };
            if code == ocf_formula::ErrorCode::UnknownName && self.names_incomplete {
                continue;
            }
            let Some((source, pointer)) = self.locate(found.document, &found.pointer) else {
                continue;
            };
            let at = source
                .locations
                .text(&pointer)
                .or_else(|| source.locations.value(&pointer));
            problems.push(
                Problem::error("formula-error", format!("{}: {message}", code.as_str()))
                    .in_file(source.file)
                    .at(&pointer, at)
                    .with("cause", code.as_str())
                    .with("pack", pack)
                    .with("formula", found.text.as_str()),
            );
        }
    }

    /// The fields visible from the pack, by local and qualified ID: its own, then its given
    /// dependencies' (a local ID resolves in the pack first).
    fn fields(&self) -> Vec<(String, Ty)> {
        let mut out = Vec::new();
        let mut add = |pack: &str, rules: &RulesDocument| {
            for (id, field) in rules.fields.iter() {
                if let Some(ty) = formulas::field_ty(field.r#type) {
                    if !out.iter().any(|(known, _)| known == id) {
                        out.push((id.to_owned(), ty.clone()));
                    }
                    out.push((format!("{pack}:{id}"), ty));
                }
            }
        };
        add(self.release.id.as_str(), &self.release.rules);
        for dep in self.dependencies {
            add(dep.id.as_str(), &dep.rules);
        }
        out
    }

    fn locate(&self, document: Document, pointer: &str) -> Option<(&Source<'_>, String)> {
        match document {
            Document::Rules => {
                let (file, there) = self.origins.locate(pointer)?;
                Some((self.rules.get(file)?, there))
            }
            Document::Content(index) => {
                let source = self.content.get(index)?;
                Some((source, format!("{}{pointer}", source.prefix)))
            }
        }
    }
}

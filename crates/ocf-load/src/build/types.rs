//! Type-checking every formula with loadRuleset's own checker ([`crate::formulas`]): the same
//! formulas, roots and expected types, so the build and loadRuleset can't disagree about a formula
//! (EC: "Every formula must parse and type-check as in the build"). The build maps each formula's
//! release pointer back to its source file.

use ocf_formula::Ty;
use ocf_model::{ContentItem, FieldType, PackRelease, RulesDocument};
use rustc_hash::{FxHashMap, FxHashSet};

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
        self.loops(problems);
        let fields = self.fields();
        let pack = self.release.id.as_str();
        let mut envs = formulas::Envs::new(&fields);
        let types = formulas::field_types(&fields);
        // An `extends` parent found by ID in constant time: a search of the content per item
        // field was quadratic in the items.
        let by_id: FxHashMap<&str, &ContentItem> = self
            .release
            .content
            .iter()
            .rev()
            .filter_map(|item| Some((item.id.as_ref()?.as_str(), item)))
            .collect();
        let item_field_type =
            |item: &ContentItem, name: &str| self.item_field_type(&by_id, item, name);
        // `self.<key>` against every declared key, when every declaration is in sight.
        let self_keys = (!self.names_incomplete)
            .then(|| super::self_keys::SelfKeys::of(self.release, self.dependencies));
        for found in formulas::collect_with(self.release, &item_field_type) {
            if let (Some(keys), Document::Content(index)) = (&self_keys, found.document)
                && let Some(source) = self.content.get(index)
            {
                keys.check(&found, source, problems);
            }
            // Syntax errors are reported, with their ranges, by the build's own parse, which does
            // not see item field values (their declaration says whether they are formulas).
            let item_value = matches!(found.document, Document::Content(_))
                && found.pointer.starts_with("/fields/");
            if !item_value && crate::parsed::parse(&found.text).is_err() {
                continue;
            }
            let expected = found
                .expected
                .clone()
                .or_else(|| formulas::target_type(found.target.as_ref()?, &types));
            let Err((code, message)) = envs.check(&found.text, found.roots, expected.as_ref())
            else {
                continue;
            };
            let message = formulas::aimed_at(&found, code, message);
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

    /// One `circular-formula` per loop between the pack's field formulas, at the formula of its
    /// first field in field order, naming every field of the loop (`data.fields`).
    fn loops(&self, problems: &mut Vec<Problem>) {
        let pack = self.release.id.as_str();
        for found in super::cycles::field_loops(pack, &self.release.rules) {
            let first = &found.fields[0];
            let pointer = format!("/fields/{}/formula", formulas::escape(first));
            let Some((source, pointer)) = self.locate(Document::Rules, &pointer) else {
                continue;
            };
            let at = source
                .locations
                .text(&pointer)
                .or_else(|| source.locations.value(&pointer));
            let message = if found.fields.len() == 1 {
                format!("the formula of `{first}` reads `{first}` itself")
            } else {
                format!(
                    "the formulas of {} read each other in a loop",
                    found
                        .fields
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            problems.push(
                Problem::error("circular-formula", message)
                    .in_file(source.file)
                    .at(&pointer, at)
                    .with("pack", pack)
                    .with("fields", found.fields.clone()),
            );
        }
    }

    /// The declared type of an item's field: its content type's (the item's `type`, else the
    /// nearest parent's through `extends` in the pack), else a template field's; `None` when the
    /// declaration is not in the pack or a given dependency.
    fn item_field_type(
        &self,
        by_id: &FxHashMap<&str, &ContentItem>,
        item: &ContentItem,
        name: &str,
    ) -> Option<FieldType> {
        let own = self.release.id.as_str();
        let mut current = item;
        let mut steps = 0;
        let ty = loop {
            if let Some(ty) = &current.r#type {
                break ty.as_str();
            }
            let parent = current.extends.as_ref()?.as_str();
            let local = match parent.split_once(':') {
                Some((p, local)) if p == own => local,
                Some(_) => return None,
                None => parent,
            };
            current = by_id.get(local)?;
            steps += 1;
            if steps > self.release.content.len() {
                return None;
            }
        };
        let packs = || std::iter::once(self.release).chain(self.dependencies.iter().copied());
        let content_type = match ty.split_once(':') {
            Some((p, local)) => packs()
                .find(|r| r.id.as_str() == p)?
                .rules
                .content_types
                .get(local),
            None => packs().find_map(|r| r.rules.content_types.get(ty)),
        };
        content_type
            .and_then(|t| t.fields.get(name))
            .or_else(|| packs().find_map(|r| r.rules.template_fields.get(name)))
            .map(|decl| decl.r#type)
    }

    /// The fields visible from the pack, by local and qualified ID: its own, then its given
    /// dependencies' (a local ID resolves in the pack first).
    fn fields(&self) -> Vec<(String, Ty)> {
        let mut out = Vec::new();
        // Local IDs already given, so a pack of many fields is not quadratic.
        let mut local = FxHashSet::default();
        let mut add = |pack: &str, rules: &RulesDocument| {
            for (id, field) in rules.fields.iter() {
                if let Some(ty) = formulas::field_ty(field.r#type) {
                    if local.insert(id.to_owned()) {
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

//! Merging a pack's rules files into the release's one rules document, in path order: maps key by
//! key, lists concatenated (formats.md §1.2). A key two files declare, or a list entry whose `id` two
//! entries share, is `duplicate-id` naming both places: a later file silently replacing an earlier
//! one's declaration is never what the author meant.

use indexmap::map::Entry;
use ocf_model::{Keyed, RulesDocument, Settings};
use rustc_hash::FxHashMap;

use super::locations::{Locations, escape};
use super::problem::Problem;

/// A rules file that was read.
pub struct RulesFile<'a> {
    pub name: &'a str,
    pub doc: &'a RulesDocument,
    pub locations: &'a Locations,
}

/// Where a declaration was first seen: its line is looked up only for a duplicate's message (a
/// document read in one pass is indexed only when a position is asked for).
struct Seen<'a> {
    file: &'a str,
    pointer: String,
    locations: &'a Locations,
}

#[derive(Default)]
struct Merger<'a> {
    seen: FxHashMap<String, Seen<'a>>,
    problems: Vec<Problem>,
    origins: Origins,
}

/// Where each declaration of the merged document came from: a pointer into the release's `rules`
/// (`/fields/hp.max/formula`, `/actions/3/steps/0/when`) back to its file and the pointer there.
#[derive(Debug, Default)]
pub struct Origins {
    /// `/section/key` or `/section/index` in the merged document to the file and the same in it.
    declarations: FxHashMap<String, (usize, String)>,
}

impl Origins {
    /// The file (its index in the merged files) and pointer of a merged-document pointer.
    pub fn locate(&self, pointer: &str) -> Option<(usize, String)> {
        let mut segments = pointer.splitn(4, '/');
        let (_, section, key) = (segments.next()?, segments.next()?, segments.next()?);
        let (file, there) = self.declarations.get(&format!("/{section}/{key}"))?;
        Some(match segments.next() {
            Some(rest) => (*file, format!("{there}/{rest}")),
            None => (*file, there.clone()),
        })
    }
}

pub fn merge<'a>(files: &[RulesFile<'a>]) -> (RulesDocument, Origins, Vec<Problem>) {
    let mut merger = Merger::default();
    let mut out = RulesDocument::default();
    for (index, file) in files.iter().enumerate() {
        merger.file(&mut out, index, file);
    }
    (out, merger.origins, merger.problems)
}

impl<'a> Merger<'a> {
    fn file(&mut self, out: &mut RulesDocument, index: usize, file: &RulesFile<'a>) {
        let doc = file.doc.clone();
        self.origins(out, index, &doc);
        self.keyed(&mut out.fields, doc.fields, "fields", file);
        self.keyed(
            &mut out.content_types,
            doc.content_types,
            "contentTypes",
            file,
        );
        self.keyed(
            &mut out.template_fields,
            doc.template_fields,
            "templateFields",
            file,
        );
        self.keyed(&mut out.situational, doc.situational, "situational", file);
        self.keyed(&mut out.bands, doc.bands, "bands", file);
        self.keyed(&mut out.constraints, doc.constraints, "constraints", file);
        self.keyed(&mut out.links, doc.links, "links", file);
        self.keyed(&mut out.families, doc.families, "families", file);
        self.keyed(&mut out.view_fields, doc.view_fields, "viewFields", file);
        if let Some(settings) = doc.settings {
            self.settings(
                out.settings.get_or_insert_with(Settings::default),
                settings,
                file,
            );
        }

        out.tags.extend(doc.tags);
        out.roll_tallies.extend(doc.roll_tallies);
        out.standard_copies.extend(doc.standard_copies);
        out.effects.extend(doc.effects);
        self.listed(&mut out.actions, doc.actions, "actions", file, |a| {
            a.id.as_ref()
        });
        self.listed(&mut out.choices, doc.choices, "choices", file, |c| {
            Some(&c.id)
        });
        self.listed(&mut out.creation, doc.creation, "creation", file, |c| {
            Some(&c.id)
        });
        self.listed(
            &mut out.follow_ups,
            doc.follow_ups,
            "followUps",
            file,
            |f| Some(&f.id),
        );
        self.listed(
            &mut out.display_groups,
            doc.display_groups,
            "displayGroups",
            file,
            |g| Some(&g.id),
        );
        self.listed(&mut out.immune_to, doc.immune_to, "immuneTo", file, |i| {
            Some(&i.id)
        });
        self.listed(
            &mut out.field_hints,
            doc.field_hints,
            "fieldHints",
            file,
            |h| Some(&h.id),
        );
        self.listed(
            &mut out.odds_hints,
            doc.odds_hints,
            "oddsHints",
            file,
            |h| Some(&h.id),
        );
    }

    /// Records where the file's declarations land in the merged document, before merging them.
    fn origins(&mut self, out: &RulesDocument, file: usize, doc: &RulesDocument) {
        let mut keyed = |section: &str, keys: Vec<&str>| {
            for key in keys {
                let pointer = format!("/{section}/{}", escape(key));
                self.origins
                    .declarations
                    .entry(pointer.clone())
                    .or_insert((file, pointer));
            }
        };
        keyed("fields", doc.fields.iter().map(|(k, _)| k).collect());
        keyed(
            "contentTypes",
            doc.content_types.iter().map(|(k, _)| k).collect(),
        );
        keyed(
            "templateFields",
            doc.template_fields.iter().map(|(k, _)| k).collect(),
        );
        keyed(
            "situational",
            doc.situational.iter().map(|(k, _)| k).collect(),
        );
        keyed("bands", doc.bands.iter().map(|(k, _)| k).collect());
        keyed(
            "constraints",
            doc.constraints.iter().map(|(k, _)| k).collect(),
        );
        keyed("links", doc.links.iter().map(|(k, _)| k).collect());
        keyed("families", doc.families.iter().map(|(k, _)| k).collect());
        keyed(
            "viewFields",
            doc.view_fields.iter().map(|(k, _)| k).collect(),
        );
        let lists = [
            ("tags", out.tags.len(), doc.tags.len()),
            (
                "rollTallies",
                out.roll_tallies.len(),
                doc.roll_tallies.len(),
            ),
            (
                "standardCopies",
                out.standard_copies.len(),
                doc.standard_copies.len(),
            ),
            ("effects", out.effects.len(), doc.effects.len()),
            ("actions", out.actions.len(), doc.actions.len()),
            ("choices", out.choices.len(), doc.choices.len()),
            ("creation", out.creation.len(), doc.creation.len()),
            ("followUps", out.follow_ups.len(), doc.follow_ups.len()),
            (
                "displayGroups",
                out.display_groups.len(),
                doc.display_groups.len(),
            ),
            ("immuneTo", out.immune_to.len(), doc.immune_to.len()),
            ("fieldHints", out.field_hints.len(), doc.field_hints.len()),
            ("oddsHints", out.odds_hints.len(), doc.odds_hints.len()),
        ];
        for (section, before, count) in lists {
            for index in 0..count {
                self.origins.declarations.insert(
                    format!("/{section}/{}", before + index),
                    (file, format!("/{section}/{index}")),
                );
            }
        }
    }

    /// Records `id` (a dotted name such as `fields.hp.max`) as declared at `pointer` in `file`; a
    /// second declaration is a problem.
    fn declare(&mut self, id: String, pointer: String, file: &RulesFile<'a>) -> bool {
        if let Some(first) = self.seen.get(&id) {
            let place = match first.locations.key(&first.pointer) {
                Some(at) => format!("{}:{}", first.file, at.line),
                None => first.file.to_owned(),
            };
            self.problems.push(
                Problem::error(
                    "duplicate-id",
                    format!("`{id}` is also declared at {place}"),
                )
                .in_file(file.name)
                .at(&pointer, file.locations.key(&pointer))
                .with("id", id)
                .with("files", vec![first.file.to_owned(), file.name.to_owned()]),
            );
            return false;
        }
        self.seen.insert(
            id,
            Seen {
                file: file.name,
                pointer,
                locations: file.locations,
            },
        );
        true
    }

    fn keyed<V>(&mut self, out: &mut Keyed<V>, doc: Keyed<V>, section: &str, file: &RulesFile<'a>) {
        for (key, value) in doc.0 {
            let pointer = format!("/{section}/{}", escape(&key));
            if self.declare(format!("{section}.{key}"), pointer, file)
                && let Entry::Vacant(slot) = out.0.entry(key)
            {
                slot.insert(value);
            }
        }
    }

    /// Appends a list's entries; an `id` seen before in the section is a duplicate (the entry is kept:
    /// the list is what the file says).
    fn listed<T>(
        &mut self,
        out: &mut Vec<T>,
        doc: Vec<T>,
        section: &str,
        file: &RulesFile<'a>,
        id: impl Fn(&T) -> Option<&String>,
    ) {
        for (index, entry) in doc.into_iter().enumerate() {
            if let Some(id) = id(&entry) {
                let pointer = format!("/{section}/{index}/id");
                self.declare(format!("{section}.{id}"), pointer, file);
            }
            out.push(entry);
        }
    }

    /// Settings merge key by key; `stacking.keys` is a map and merges by stack key.
    fn settings(&mut self, out: &mut Settings, doc: Settings, file: &RulesFile<'a>) {
        let leaf = |merger: &mut Merger<'a>, name: &str, set: bool| {
            set && merger.declare(
                format!("settings.{name}"),
                format!("/settings/{}", name.replace('.', "/")),
                file,
            )
        };
        if let Some(stacking) = doc.stacking {
            let target = out.stacking.get_or_insert_with(Default::default);
            for (key, policy) in stacking.keys.0 {
                if leaf(self, &format!("stacking.keys.{key}"), true) {
                    target.keys.0.insert(key, policy);
                }
            }
            if leaf(self, "stacking.default", stacking.default.is_some()) {
                target.default = stacking.default;
            }
        }
        if let Some(competing) = doc.competing
            && leaf(self, "competing.recommend", competing.recommend.is_some())
        {
            out.competing = Some(competing);
        }
        if leaf(self, "rounding", doc.rounding.is_some()) {
            out.rounding = doc.rounding;
        }
        if leaf(self, "roundIncoming", doc.round_incoming.is_some()) {
            out.round_incoming = doc.round_incoming;
        }
        if let Some(modifiers) = doc.roll_modifiers
            && leaf(
                self,
                "rollModifiers.advantage",
                modifiers.advantage.is_some(),
            )
        {
            out.roll_modifiers = Some(modifiers);
        }
    }
}

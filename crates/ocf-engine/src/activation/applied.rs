//! The activation walk, applied entries (EC "Activation": an `applied` entry with `active` not
//! `false`, its applied grants, and Immunities 1–5): the immunity steps in order, then the active
//! entries activated with their applied grants, and each blocked one reported `immune`. Steps 2, 3
//! and 5's immunities are in [`super::immunity`], step 4's rounds in [`super::rounds`].

use super::immunity::Candidates;
use super::rounds::{State, rounds};
use super::*;

impl<'db> Walk<'db> {
    /// The applied entries (EC, "Immunities"), after step 1: the holder activations are the walk
    /// so far.
    pub(super) fn applied(&mut self) {
        let applied = self.character.applied(self.db).clone();
        // Without applied entries no immunity has anything to block: their conditions aren't
        // evaluated (nor read what they would).
        if applied.is_empty() {
            return;
        }
        // 2. The active holder immunities.
        let holder = self.holder_immunities();
        // 3. Blocked entries and candidates, each candidate's immunities and whom it blocks.
        let candidates = self.candidates(&applied, &holder);
        // 4. Rounds.
        let state = rounds(&candidates.list, &candidates.blockers);
        let active: Vec<(usize, Vec<ActiveImmunity<'db>>)> = candidates
            .list
            .iter()
            .filter(|&&c| state[c] == State::Active)
            .map(|&c| (c, candidates.own[c].clone()))
            .collect();
        let reports = self.blocked_entries(&applied, &holder, &candidates, &state, &active);
        // The active candidates activated in `applied` order; their applied grants are checked
        // against the immunities as they are followed (step 5, [`Walk::grant_blocked`]).
        self.immune = Some(Immunities {
            holder,
            active,
            reports,
        });
        for &c in &candidates.list {
            if state[c] == State::Active {
                let activation = self.applied_activation(c, &applied[c]);
                let index = self.push(activation);
                let tree = Picks::default();
                self.follow(index, &tree, None, 1);
            }
        }
        self.report_immune();
    }

    /// `immune` for each blocked entry and each active immunity its source matches: the holder's,
    /// then the active candidates' in `applied` order.
    fn blocked_entries(
        &self,
        applied: &[AppliedEntry],
        holder: &[ActiveImmunity<'db>],
        candidates: &Candidates<'db>,
        state: &[State],
        active: &[(usize, Vec<ActiveImmunity<'db>>)],
    ) -> Vec<Report<'db>> {
        let mut reports: Vec<Report<'db>> = Vec::new();
        for &i in &candidates.live {
            let blocked = candidates.blocked_by_holder[i] || state[i] == State::Blocked;
            if !blocked {
                continue;
            }
            let source = applied[i].source.as_str();
            let matching = holder
                .iter()
                .chain(
                    active
                        .iter()
                        .filter(|(a, _)| *a != i)
                        .flat_map(|(_, ims)| ims),
                )
                .filter(|im| self.matches(im, source, &applied[i]));
            for im in matching {
                reports.push(Report {
                    immunity: im.clone(),
                    order: i,
                    entry: applied[i].id.clone(),
                    item: source.to_owned(),
                });
            }
        }
        reports
    }

    /// The `immune` issues found (blocked entries, and the grants step 5 blocked while the active
    /// entries were activated), in `applied` order, each with its immunity's activation.
    fn report_immune(&mut self) {
        let Some(immune) = self.immune.take() else {
            return;
        };
        let mut reports = immune.reports;
        reports.sort_by_key(|r| r.order);
        for report in reports {
            let activation = self.immunity_activation(&report.immunity);
            let im = &report.immunity;
            // A rules immunity is named `<pack>:<id>`, content's `<owner>/<id>` (EC, issues).
            let (id, rules_pack) = if im.rules {
                (
                    format!("{}:{}", im.pack, im.immunity.id),
                    Some(im.pack.to_owned()),
                )
            } else {
                (format!("{}/{}", im.owner, im.immunity.id), None)
            };
            self.out.blocked.push(Blocked {
                activation,
                id,
                rules_pack,
                entry: report.entry,
                item: report.item,
                order: (report.order, im.written),
            });
        }
    }

    pub(super) fn applied_activation(&self, index: usize, entry: &AppliedEntry) -> Activation {
        Activation {
            item: entry.source.0.as_str().into(),
            via: Via::Applied,
            applied: true,
            parent: None,
            path: None,
            copy: None,
            applied_entry: Some(index),
            entry: Some(entry.id.as_str().into()),
            templates: no_templates(),
            waived: false,
            kept_by: None,
        }
    }
}

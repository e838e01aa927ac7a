//! The activation walk, applied entries (EC "Activation", applied content; "Immunity"): the
//! active applied entries with their applied grants, in rounds until the immunities settle.

use super::*;

impl<'db> Walk<'db> {
    /// Immunities, then the applied entries (EC, "Immunities").
    pub(super) fn applied(&mut self) {
        let db = self.db;
        let applied = self.character.applied(db).clone();
        // Without applied entries no immunity has anything to block: their conditions aren't
        // evaluated (nor read what they would).
        if applied.is_empty() {
            return;
        }
        // 2. The active holder immunities: the rules', then each holder activation's.
        let mut holder: Vec<ActiveImmunity<'db>> = Vec::new();
        for (i, immunity) in self.ruleset.immune_to.iter().enumerate() {
            if self.condition(immunity.decl.when.as_ref(), Bindings::rules(&immunity.pack)) {
                holder.push(ActiveImmunity {
                    activation: None,
                    rules: true,
                    owner: immunity.pack.clone(),
                    pack: &immunity.pack,
                    immunity: &immunity.decl,
                    written: i,
                    bindings: Bindings::rules(&immunity.pack),
                    entry: None,
                    chain: Vec::new(),
                });
            }
        }
        for index in 0..self.out.list.len() {
            let activation = self.out.list[index].clone();
            let Some(entry) = self.ruleset.item(&activation.item) else {
                continue;
            };
            let pack = entry.pack_of("immuneTo");
            for (i, immunity) in entry.item.immune_to.iter().enumerate() {
                if immunity.scope == Some(Scope::Applied) {
                    continue;
                }
                let bindings = self.bindings(&activation, pack);
                if self.condition(immunity.when.as_ref(), bindings.clone()) {
                    holder.push(ActiveImmunity {
                        activation: Some(index),
                        rules: false,
                        owner: activation.item.to_string(),
                        pack,
                        immunity,
                        written: i,
                        bindings,
                        entry: None,
                        chain: Vec::new(),
                    });
                }
            }
        }
        // 3. Blocked entries and candidates.
        let live: Vec<usize> = (0..applied.len())
            .filter(|&i| {
                applied[i].active != Some(false)
                    && self.ruleset.item(applied[i].source.as_str()).is_some()
            })
            .collect();
        let mut blocked_by_holder = vec![false; applied.len()];
        for &i in &live {
            let source = applied[i].source.as_str();
            blocked_by_holder[i] = holder
                .iter()
                .any(|im| self.matches(im, source, &applied[i]));
        }
        let candidates: Vec<usize> = live
            .iter()
            .copied()
            .filter(|&i| !blocked_by_holder[i])
            .collect();
        // Each candidate's immunities (`scope: applied`, `when` holding): its source's, then those
        // of the content its applied grants reach, less grants a holder immunity blocks (step 5).
        let mut own: Vec<Vec<ActiveImmunity<'db>>> = vec![Vec::new(); applied.len()];
        for &c in &candidates {
            let activation = self.applied_activation(c, &applied[c]);
            let mut found = Vec::new();
            self.reach_immunities(
                &activation,
                vec![activation.item.to_string()],
                &holder,
                &mut found,
                1,
            );
            own[c] = found;
        }
        // blockers[x]: the candidates that block candidate x.
        let blocks = |a: usize, b: usize, this: &Self| {
            a != b
                && own[a]
                    .iter()
                    .any(|im| this.matches(im, applied[b].source.as_str(), &applied[b]))
        };
        let mut blockers: Vec<Vec<usize>> = vec![Vec::new(); applied.len()];
        for &x in &candidates {
            for &y in &candidates {
                if blocks(y, x, self) {
                    blockers[x].push(y);
                }
            }
        }
        // 4. Rounds.
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            Undecided,
            Active,
            Blocked,
        }
        let mut state = vec![State::Undecided; applied.len()];
        while candidates.iter().any(|&c| state[c] == State::Undecided) {
            let mut activated = Vec::new();
            for &c in &candidates {
                if state[c] == State::Undecided
                    && blockers[c].iter().all(|&b| state[b] == State::Blocked)
                {
                    activated.push(c);
                }
            }
            if activated.is_empty() {
                // A cycle: the earliest undecided candidate that blocks itself through undecided
                // candidates becomes active.
                let undecided: Vec<usize> = candidates
                    .iter()
                    .copied()
                    .filter(|&c| state[c] == State::Undecided)
                    .collect();
                let reaches_itself = |start: usize| {
                    let mut seen = vec![false; applied.len()];
                    let mut stack = vec![start];
                    while let Some(x) = stack.pop() {
                        for &b in &blockers[x] {
                            if state[b] != State::Undecided {
                                continue;
                            }
                            if b == start {
                                return true;
                            }
                            if !seen[b] {
                                seen[b] = true;
                                stack.push(b);
                            }
                        }
                    }
                    false
                };
                let pick = undecided
                    .iter()
                    .copied()
                    .find(|&c| reaches_itself(c))
                    .unwrap_or(undecided[0]);
                activated.push(pick);
            }
            for &c in &activated {
                state[c] = State::Active;
            }
            for &c in &candidates {
                if state[c] == State::Undecided
                    && candidates
                        .iter()
                        .any(|&a| state[a] == State::Active && blocks(a, c, self))
                {
                    state[c] = State::Blocked;
                }
            }
        }
        let active: Vec<(usize, Vec<ActiveImmunity<'db>>)> = candidates
            .iter()
            .filter(|&&c| state[c] == State::Active)
            .map(|&c| (c, own[c].clone()))
            .collect();
        // `immune` for each blocked entry and each active immunity its source matches: the
        // holder's, then the active candidates' in `applied` order.
        let mut reports: Vec<Report<'db>> = Vec::new();
        for &i in &live {
            let blocked = blocked_by_holder[i] || state[i] == State::Blocked;
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
        // Activation in `applied` order; their applied grants are checked against the immunities
        // as they are followed ([`Walk::grant_blocked`]).
        self.immune = Some(Immunities {
            holder,
            active,
            reports,
        });
        for &c in &candidates {
            if state[c] == State::Active {
                let activation = self.applied_activation(c, &applied[c]);
                let index = self.push(activation);
                let tree = Picks::default();
                self.follow(index, &tree, None, 1);
            }
        }
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

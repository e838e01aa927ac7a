//! The activation walk, immunity rounds (EC "Activation", Immunities 4): the candidates decided in
//! rounds until none is undecided, from who blocks whom alone.

/// Where a candidate stands in the rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum State {
    Undecided,
    Active,
    Blocked,
}

/// Step 4: each entry's state (by its place in `applied`; an entry that isn't a candidate stays
/// undecided), `candidates` in `applied` order and `blockers[x]` the candidates that block `x`.
/// Each round: 1. the undecided candidates whose blockers are all blocked become active; 2. only if
/// none did, the earliest one that blocks itself through undecided candidates; 3. the undecided
/// candidates an active one blocks are blocked. Each round decides at least one, so they end.
pub(super) fn rounds(candidates: &[usize], blockers: &[Vec<usize>]) -> Vec<State> {
    let mut state = vec![State::Undecided; blockers.len()];
    while candidates.iter().any(|&c| state[c] == State::Undecided) {
        // 1.
        let mut activated: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&c| {
                state[c] == State::Undecided
                    && blockers[c].iter().all(|&b| state[b] == State::Blocked)
            })
            .collect();
        // 2.
        if activated.is_empty() {
            activated.push(earliest_in_a_cycle(candidates, blockers, &state));
        }
        for &c in &activated {
            state[c] = State::Active;
        }
        // 3.
        for &c in candidates {
            if state[c] == State::Undecided
                && blockers[c].iter().any(|&a| state[a] == State::Active)
            {
                state[c] = State::Blocked;
            }
        }
    }
    state
}

/// Step 4.2: every undecided candidate has an undecided blocker, so some block each other in a
/// cycle: the earliest undecided candidate that blocks itself through undecided candidates.
fn earliest_in_a_cycle(candidates: &[usize], blockers: &[Vec<usize>], state: &[State]) -> usize {
    let undecided: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&c| state[c] == State::Undecided)
        .collect();
    let reaches_itself = |start: usize| {
        let mut seen = vec![false; blockers.len()];
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
    undecided
        .iter()
        .copied()
        .find(|&c| reaches_itself(c))
        .unwrap_or(undecided[0])
}

//! Who speaks next in a listening deliberation (seed 002): the most
//! urgent volunteer.

use agon_core::{Bid, PersonaId};

/// Who volunteers most urgently among `bids`: the highest urgency, ties
/// broken by who spoke least recently (`last_spoke` gives a persona's
/// latest turn; never spoken counts as oldest), then by the order of the
/// bids. `None` when nobody volunteers.
pub fn pick_volunteer(
    bids: &[Bid],
    last_spoke: impl Fn(&PersonaId) -> Option<usize>,
) -> Option<&PersonaId> {
    bids.iter()
        .enumerate()
        .filter(|(_, b)| b.respond)
        .max_by_key(|(i, b)| {
            // Larger key wins: urgency, then older last turn, then earlier bid.
            let recency = last_spoke(&b.persona).map_or(usize::MAX, |t| usize::MAX - 1 - t);
            (b.urgency, recency, usize::MAX - i)
        })
        .map(|(_, b)| &b.persona)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bid(p: &str, respond: bool, urgency: u8) -> Bid {
        Bid {
            persona: PersonaId::new(p),
            respond,
            urgency,
            reason: String::new(),
        }
    }

    #[test]
    fn the_most_urgent_volunteer_speaks_ties_go_to_who_spoke_least_recently() {
        let last = |p: &PersonaId| match p.as_str() {
            "a" => Some(9),
            "b" => Some(3),
            _ => None,
        };
        let bids = [bid("a", true, 7), bid("b", true, 7), bid("c", false, 0)];
        assert_eq!(pick_volunteer(&bids, last).unwrap().as_str(), "b");
        let bids = [bid("a", true, 8), bid("b", true, 7), bid("c", true, 7)];
        assert_eq!(pick_volunteer(&bids, last).unwrap().as_str(), "a");
        // Never spoken counts as the oldest.
        let bids = [bid("b", true, 5), bid("c", true, 5)];
        assert_eq!(pick_volunteer(&bids, last).unwrap().as_str(), "c");
        // Equal in everything: the earlier bid.
        let bids = [bid("d", true, 5), bid("c", true, 5)];
        assert_eq!(pick_volunteer(&bids, last).unwrap().as_str(), "d");
        let bids = [bid("a", false, 0), bid("b", false, 0)];
        assert!(pick_volunteer(&bids, last).is_none());
    }
}

//! The set against separate streams, and its checks.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::detokenizer::doc_tokenizer_json;

fn load() -> Arc<Detokenizer> {
    Arc::new(Detokenizer::from_json(&doc_tokenizer_json()).unwrap())
}

const DENSE: Plan<'static> = Plan {
    slots: None,
    counts: None,
};

#[test]
fn dense_step_equals_separate_streams() {
    let det = load();
    let mut set = StreamSet::new(&det);
    let mut alone: Vec<Stream> = (0..3).map(|_| Stream::new(&det, &[], false)).collect();
    for _ in 0..3 {
        set.add(Stream::new(&det, &[], false)).unwrap();
    }
    // "Hi 中" one id at a time, in three streams shifted by one id.
    let seq = [0u32, 1, 2, 3, 4, 5, 0, 1];
    for t in 0..6 {
        let ids: Vec<u32> = (0..3).map(|k| seq[t + k % 3]).collect();
        set.step(DENSE, &ids).unwrap();
        for (k, s) in alone.iter_mut().enumerate() {
            let want = s.step(&ids[k..k + 1]).unwrap().to_owned();
            assert_eq!(set.output(k).unwrap(), want);
        }
    }
}

#[test]
fn a_noted_fast_step_is_applied_before_the_stream_is_read() {
    let det = load();
    let mut set = StreamSet::new(&det);
    let mut alone = Stream::new(&det, &[], false);
    for _ in 0..2 {
        set.add(Stream::new(&det, &[], false)).unwrap();
    }
    // "H", then "i": one id each, dense, as lone steps.
    for id in [0u32, 1] {
        set.step(DENSE, &[id, id]).unwrap();
        let want = alone.step(&[id]).unwrap().to_owned();
        assert_eq!(set.output(0).unwrap(), want);
        assert_eq!(set.output_token(0), alone.output_token());
    }
    // Both steps were only noted, so the reads below are what applies them.
    assert_eq!(set.pending, [1, 1]);
    assert_eq!(set.get(0).unwrap().window(), alone.window());
    assert_eq!(set.pending, [NONE, 1]);
    let moved = set.remove(1).unwrap();
    assert_eq!(moved.window(), alone.window());
    // Two ids through the plan, then a flush: the same as the lone stream.
    let plan = Plan {
        slots: Some(&[0]),
        counts: Some(&[2]),
    };
    set.step(plan, &[2, 3]).unwrap();
    assert_eq!(set.output(0).unwrap(), alone.step(&[2, 3]).unwrap());
    assert_eq!(set.finish(0).unwrap(), alone.finish().unwrap());
    assert_eq!(set.is_finished(0), Ok(true));
    assert!(!set.contains(1));
}

#[test]
fn slots_and_counts() {
    let det = load();
    let mut set = StreamSet::new(&det);
    let a = set.add(Stream::new(&det, &[], false)).unwrap();
    let b = set.add(Stream::new(&det, &[], false)).unwrap();
    let plan = Plan {
        slots: Some(&[1, 0]),
        counts: Some(&[4, 2]),
    };
    set.step(plan, &[2, 3, 4, 5, 0, 1]).unwrap();
    assert_eq!(set.output(b).unwrap(), " 中");
    assert_eq!(set.output(a).unwrap(), "Hi");
    assert_eq!(set.finish(a).unwrap(), "");
}

#[test]
fn errors_name_the_slot_and_change_nothing() {
    let det = load();
    let mut set = StreamSet::new(&det);
    for _ in 0..3 {
        set.add(Stream::new(&det, &[], false)).unwrap();
    }
    set.finish(2).unwrap();
    assert_eq!(
        set.step(DENSE, &[0, 1, 2]),
        Err(SetError::Stream {
            slot: 2,
            error: Error::Finished
        })
    );
    let twice = Plan {
        slots: Some(&[0, 1, 0]),
        counts: None,
    };
    assert_eq!(
        set.step(twice, &[0, 1, 2]),
        Err(SetError::Repeated { slot: 0 })
    );
    let missing = Plan {
        slots: Some(&[0, 7]),
        counts: None,
    };
    assert_eq!(
        set.step(missing, &[0, 1]),
        Err(SetError::NoStream { slot: 7 })
    );
    let short = Plan {
        slots: None,
        counts: Some(&[1, 1]),
    };
    assert!(matches!(set.step(short, &[0]), Err(SetError::Shape { .. })));
    // Nothing was stepped: slot 0 still starts at "H".
    set.step(
        Plan {
            slots: Some(&[0]),
            counts: None,
        },
        &[0],
    )
    .unwrap();
    assert_eq!(set.output(0).unwrap(), "H");
    // A count of 0 skips a finished slot.
    let skip = Plan {
        slots: None,
        counts: Some(&[1, 1, 0]),
    };
    set.step(skip, &[1, 1]).unwrap();
    assert_eq!(set.output(0).unwrap(), "i");
}

#[test]
fn slots_are_reused_lowest_first() {
    let det = load();
    let mut set = StreamSet::new(&det);
    for _ in 0..4 {
        set.add(Stream::new(&det, &[], false)).unwrap();
    }
    set.remove(1).unwrap();
    set.remove(2).unwrap();
    assert_eq!(set.len(), 2);
    assert_eq!(set.slot_end(), 4);
    assert_eq!(set.add(Stream::new(&det, &[], false)).unwrap(), 1);
    set.remove(3).unwrap();
    assert_eq!(set.slot_end(), 2);
    assert_eq!(set.add(Stream::new(&det, &[], false)).unwrap(), 2);
    assert_eq!(set.remove(5).unwrap_err(), SetError::NoStream { slot: 5 });
    let other = load();
    assert_eq!(
        set.add(Stream::new(&other, &[], false)).unwrap_err(),
        SetError::OtherDetokenizer
    );
}

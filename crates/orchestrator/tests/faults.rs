//! Provider faults end to end (issue 32): every protocol against the
//! fault-injecting provider (`agon_testkit::faults`: 429 with
//! `Retry-After`, 500, 503, 529, resets, slow headers, stalls, truncated
//! answers, malformed JSON, empty choices, schema-invalid and whitespace
//! answers) at a 20 % fault rate. Every debate finishes, or fails with an
//! error naming the provider and the step and then finishes on a resume;
//! and it ends with as many messages as a run on a healthy provider.

#[path = "../benches/support/faults.rs"]
pub(crate) mod runner;

use runner::{PROTOCOLS, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_protocol_survives_a_provider_that_faults_a_fifth_of_its_calls() {
    let dir = tempfile::tempdir().unwrap();
    for protocol in PROTOCOLS {
        let healthy = run(protocol, 0.0, 1, dir.path()).await;
        assert!(healthy.finished_first, "{protocol}: {:?}", healthy.error);
        assert_eq!(healthy.faults.injected(), 0);
        for seed in [11, 12] {
            let o = run(protocol, 0.2, seed, dir.path()).await;
            assert!(
                o.faults.injected() > 0,
                "{protocol} seed {seed}: no fault drawn"
            );
            if let Some(error) = &o.error {
                // "debate `ID`: utterance of Theo (take/aspect-2/0/theo): faulty: …"
                assert!(
                    error.contains("debate `") && error.contains(": faulty"),
                    "{protocol} seed {seed}: the error names neither debate, step nor provider: {error}"
                );
            }
            assert!(
                o.finished,
                "{protocol} seed {seed}: not finished after a resume: {o:?}"
            );
            assert_eq!(
                o.messages, healthy.messages,
                "{protocol} seed {seed}: messages lost or repeated ({o:?})"
            );
        }
    }
}

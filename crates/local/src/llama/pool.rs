//! Data parallelism on candle's persistent thread pool (spinning workers,
//! about a microsecond to start a parallel step, against tens for a
//! general-purpose pool: a token takes ~150 steps). Sharing candle's pool
//! also keeps the embedder and the chat model from oversubscribing the CPU.

use std::sync::Mutex;

use candle_core::utils::barrier_pool;

/// Threads taking part in a parallel step (the workers and the caller).
pub(crate) fn threads() -> usize {
    barrier_pool().n_workers() + 1
}

/// Calls `f(offset, chunk)` for every `chunk`-sized piece of `out` (the last
/// may be shorter), spread over the pool; `offset` is the piece's index in `out`.
pub(crate) fn for_each_chunk<F>(out: &mut [f32], chunk: usize, f: F)
where
    F: Fn(usize, &mut [f32]) + Sync,
{
    let chunk = chunk.max(1);
    if out.len() <= chunk {
        f(0, out);
        return;
    }
    // Each piece behind its own (never contended) lock: the pool hands out
    // indices to a shared closure, and this is how a piece is lent mutably.
    let pieces: Vec<Mutex<&mut [f32]>> = out.chunks_mut(chunk).map(Mutex::new).collect();
    barrier_pool().execute_chunked(pieces.len(), |range| {
        for index in range {
            let mut piece = match pieces[index].lock() {
                Ok(piece) => piece,
                Err(poisoned) => poisoned.into_inner(),
            };
            f(index * chunk, &mut piece);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_piece_is_visited_once_with_its_offset() {
        let mut out = vec![0.0f32; 1000];
        for_each_chunk(&mut out, 64, |offset, piece| {
            for (i, v) in piece.iter_mut().enumerate() {
                *v += (offset + i) as f32;
            }
        });
        assert!(out.iter().enumerate().all(|(i, &v)| v == i as f32));
    }
}

package io.kinesisspark.realtime

import io.kinesisspark.{ShardGraph, ShardPosition}
import io.kinesisspark.aws.ShardInfo

/**
 * Which children of a shard that a real-time task just finished the task may read at once, in the batch their
 * parents ended, rather than from the next batch: those whose every listed parent is one of the task's shards and
 * finished (the order rule is [[ShardGraph.readable]]'s). A child of a merge whose other parent another task reads
 * waits for the next batch, which plans it once both parents' ends are in the offset: within a batch, nothing says
 * when the other task's sink has taken that parent's last records (a sink may hold rows, as PySpark's `foreach`
 * does, or write them asynchronously), and only the batch's commit does; reading the child earlier would let a key's
 * records from the child reach the sink before its last records from that parent. The driver deals shards of
 * adjacent hash keys to the same task ([[RealTimePlanner.group]]), so that this is the rare case.
 *
 * {{{
 *   val children = new ChildShards(stream => api.listShards(stream, 1000))
 *   children.startable("clicks", "shardId-000000000000", Map("shardId-000000000000" -> ShardPosition.Finished))
 *   // the split's two children, to read from their start
 * }}}
 *
 * @param listing the stream's shards as ListShards reports them now (children appear when their parent closes)
 */
final class ChildShards(listing: String => Seq[ShardInfo]) {

  /**
   * The children of `finished` (a shard of `stream` the task has read to its end) that the task may read now.
   *
   * @param positions every shard of `stream` the task reads, with where it stands
   */
  def startable(stream: String, finished: String, positions: Map[String, ShardPosition]): Seq[ShardInfo] = {
    val graph = ShardGraph(listing(stream))
    val children = graph.shards.filter(s => s.parentShardIds.contains(finished) && !positions.contains(s.shardId))
    val ids = children.map(_.shardId).toSet
    // A parent the task does not read has no position here, so it counts as unfinished.
    graph.readable(positions ++ ids.map(_ -> ShardPosition.TrimHorizon)).filter(s => ids(s.shardId))
  }
}

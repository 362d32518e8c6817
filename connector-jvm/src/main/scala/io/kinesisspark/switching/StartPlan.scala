package io.kinesisspark.switching

import io.kinesisspark.{InitialPosition, ShardGraph}
import io.kinesisspark.InitialPosition.{PerShard, ShardEnd, TrimHorizon}
import io.kinesisspark.aws.ShardInfo

/**
 * Where each shard starts so that a query continues where another consumer stopped, and what the user should know
 * of it: the per-shard start (option `initialPosition`'s JSON form) and warnings, each a sentence naming the shards.
 * Made from a KCL lease table ([[KclStart]]) or an awslabs checkpoint ([[AwslabsStart]]).
 *
 * {{{
 *   val plan = StartPlan.complete("orders", Map("shardId-000000000001" -> InitialPosition.AfterSequenceNumber("4959")),
 *     gone = Nil, listed, InitialPosition.Latest, notes = Nil)
 *   plan.position.json(Seq("orders"))   // the option's JSON: the named shard, its relatives, and the default
 * }}}
 *
 * @param position the per-shard start
 * @param notes    warnings for the user
 */
final case class StartPlan(position: PerShard, notes: Seq[String])

object StartPlan {
  /**
   * The start of one stream from the shards the old consumer had positions for. Every listed shard related to one
   * of those is named too, so the start reads the same when printed and given back as `initialPosition`: its
   * descendants start at their beginning (they hold later records; a consumer reads a child only after its
   * parents), its ancestors count as read (finished before it, or closed before the consumer started). Shards the
   * consumer never saw start at `default`.
   *
   * @param named  the start of each listed shard the old consumer had a position for
   * @param gone   shards it had a position for that the stream no longer lists (retention removed them): their
   *               listed children count as descendants
   * @param notes  the caller's warnings
   */
  def complete(stream: String, named: Map[String, InitialPosition], gone: Seq[String], listed: Seq[ShardInfo],
      default: InitialPosition, notes: Seq[String]): StartPlan = {
    val graph = ShardGraph(listed)
    val ancestors = graph.ancestorsOf(named.keySet) -- named.keySet
    val descendants = graph.descendantsOf(named.keySet ++ gone) -- named.keySet -- ancestors
    val relatives =
      ancestors.map(_ -> (ShardEnd: InitialPosition)) ++ descendants.map(_ -> (TrimHorizon: InitialPosition))
    StartPlan(PerShard(default, (named ++ relatives).map { case (id, p) => (stream, id) -> p }), notes)
  }

  /** Several streams' plans as one start: `default` for shards none names. */
  def merge(default: InitialPosition, plans: Seq[StartPlan], notes: Seq[String]): StartPlan =
    StartPlan(PerShard(default, plans.flatMap(_.position.shards).toMap), notes ++ plans.flatMap(_.notes))
}

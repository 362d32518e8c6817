package io.kinesisspark

import scala.collection.mutable

import io.kinesisspark.ShardPosition.Finished

/**
 * Keeps a batch's parents and children in one task, parents first. A micro-batch never holds a parent's last records
 * and its child's first ([[BatchEndPlanner]]), but a real-time batch may (a child is read within seconds of its
 * parents' end), and such a batch is read again as a micro-batch is when it is replayed from the offset log: its
 * slices, read in parallel tasks, would hand a key's records from the child before those from its parent. Here each
 * family (shards linked by parenthood within the batch) becomes one group, read slice after slice, every parent before
 * its children; other slices are left to [[PartitionCoalescer]].
 *
 * {{{
 *   val (alone, families) = ShardFamilies.split(slices, (stream, shard) => graph.parentsOf(shard))
 *   // families: Seq(Seq(parentSlice, childSlice0, childSlice1)), alone: every other slice
 * }}}
 */
object ShardFamilies {
  /**
   * The slices with no parent or child in the batch, and the families, each in an order that reads parents first.
   * `parentsOf` is asked only about streams in which a slice reads its shard to its end (only there can a child have
   * records in the batch).
   */
  def split(slices: Seq[ShardSlice],
      parentsOf: (String, String) => Seq[String]): (Seq[ShardSlice], Seq[Seq[ShardSlice]]) = {
    // Only in a stream where a shard is read to its end can a child have records in the batch.
    val ending = slices.iterator.filter(_.to == Finished).map(_.stream).toSet
    if (ending.isEmpty) return (slices, Nil)
    val byShard = slices.map(s => (s.stream, s.shardId) -> s).toMap
    val parents: Map[(String, String), Seq[(String, String)]] = slices.map { s =>
      val listed = if (ending(s.stream)) parentsOf(s.stream, s.shardId) else Nil
      (s.stream, s.shardId) -> listed.map(p => (s.stream, p)).filter(byShard.contains)
    }.toMap
    if (parents.values.forall(_.isEmpty)) return (slices, Nil)
    // Families: the shards reached from one another through parent links either way.
    val neighbours = mutable.Map.empty[(String, String), List[(String, String)]].withDefaultValue(Nil)
    parents.foreach { case (child, ps) => ps.foreach { p => neighbours(child) ::= p; neighbours(p) ::= child } }
    val familyOf = mutable.Map.empty[(String, String), Int]
    var families = 0
    slices.foreach { s =>
      val key = (s.stream, s.shardId)
      if (neighbours(key).nonEmpty && !familyOf.contains(key)) {
        var todo = List(key)
        while (todo.nonEmpty) {
          val k = todo.head
          todo = todo.tail
          if (!familyOf.contains(k)) { familyOf(k) = families; todo = neighbours(k) ::: todo }
        }
        families += 1
      }
    }
    // A shard's generation within the batch: parents first, then children, then grandchildren.
    val generation = mutable.Map.empty[(String, String), Int]
    def generationOf(k: (String, String)): Int =
      generation.getOrElseUpdate(k, parents(k).map(generationOf).foldLeft(-1)(math.max) + 1)
    val (linked, alone) = slices.partition(s => familyOf.contains((s.stream, s.shardId)))
    val grouped = linked.groupBy(s => familyOf((s.stream, s.shardId))).toSeq.sortBy(_._1).map { case (_, family) =>
      family.sortBy(s => (generationOf((s.stream, s.shardId)), s.shardId))
    }
    (alone, grouped)
  }
}

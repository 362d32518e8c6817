package io.kinesisspark

/**
 * The latest offsets of one stream by their JSON, so each is parsed once. Spark hands a batch's offsets back as JSON
 * several times a batch (Spark 4 deserializes the start and the end in constructing the batch, in running it and in
 * committing it), and parsing the positions of 10,000 shards takes tens of milliseconds each time. An offset found
 * here also has its JSON rendered already. Offsets are immutable, so handing the same one back is safe.
 *
 * {{{
 *   val recent = new RecentOffsets()
 *   recent.remember(end)             // a batch end the source made
 *   recent.parse(end.json()) eq end  // true: no parsing
 * }}}
 *
 * @param capacity offsets kept: a batch's start and end, and the next end being planned, with room to spare
 */
final class RecentOffsets(capacity: Int = 8) {
  private val byJson = new java.util.LinkedHashMap[String, KinesisSourceOffset](16, 0.75f, true) {
    override def removeEldestEntry(eldest: java.util.Map.Entry[String, KinesisSourceOffset]): Boolean =
      size() > capacity
  }

  /** Keeps `offset` under its own JSON; returns it. */
  def remember(offset: KinesisSourceOffset): KinesisSourceOffset = {
    val json = offset.json()
    synchronized(byJson.put(json, offset))
    offset
  }

  /** The offset of `json`: a kept one, or parsed (and kept under `json`, which an older version's JSON may be). */
  def parse(json: String): KinesisSourceOffset =
    synchronized(Option(byJson.get(json))).getOrElse {
      val parsed = KinesisSourceOffset.fromJson(json)
      synchronized(byJson.put(json, parsed))
      parsed
    }
}

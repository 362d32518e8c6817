// From the awslabs connector's README (github.com/awslabs/spark-sql-kinesis-connector, Apache License 2.0):
// "Start Query",
// quoted byte for byte as the README has it. It needs the `kinesis` DataFrame of a source example.

 // Cast data into string and group by data column
 val query = kinesis
            .selectExpr("CAST(data AS STRING)").as[(String)]
            .groupBy("data").count()
            .writeStream
            .format("console")
            .outputMode("complete") 
            .start()
